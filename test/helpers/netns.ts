import { execFileSync, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createInterface } from "node:readline";
import { spawnOwned } from "./children.js";

// Real kernel state for tests: a named network namespace on the host kernel (`ip netns`), so several
// steps (load nft, ipset, iptables, then run node) see the same state. Always destroy it: use
// withNetns(), which deletes the namespace even when the body throws.

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export class NetNs {
  private constructor(readonly name: string) {}

  static create(): NetNs {
    const name = `proxyscope-t${process.pid}-${randomBytes(3).toString("hex")}`;
    execFileSync("ip", ["netns", "add", name]);
    return new NetNs(name);
  }

  /** Runs argv inside the namespace (no shell); never throws on a non-zero exit. */
  exec(argv: readonly string[], input?: string): RunResult {
    const r = spawnSync("ip", ["netns", "exec", this.name, ...argv], {
      input,
      encoding: "utf8",
      maxBuffer: 256 * 1024 * 1024,
    });
    return { code: r.status ?? -1, stdout: r.stdout ?? "", stderr: r.stderr ?? String(r.error ?? "") };
  }

  /** Like exec, but a failure is an exception naming the command (for loading state). */
  must(argv: readonly string[], input?: string): string {
    const r = this.exec(argv, input);
    if (r.code !== 0)
      throw new Error(`${argv.join(" ")} in ${this.name} exited ${r.code}: ${r.stderr.trim()}`);
    return r.stdout;
  }

  /** `nft -f -`, declarations (table/set/map/chain) first, as kube-proxy's own transactions do. */
  loadNft(text: string): void {
    const lines = text.split("\n");
    const decl = /^add (table|set|map|chain) /;
    const ordered = [...lines.filter((l) => decl.test(l)), ...lines.filter((l) => !decl.test(l))].join("\n");
    this.must(["nft", "-f", "-"], ordered);
  }

  ipsetRestore(text: string): void {
    this.must(["ipset", "restore"], text);
  }

  iptablesRestore(text: string, backend: "nft" | "legacy", family: "ipv4" | "ipv6"): void {
    const tool = `${family === "ipv6" ? "ip6" : "ip"}tables-${backend}-restore`;
    this.must([tool, "--noflush"], text);
  }

  /** Runs a node script inside the namespace with the same node binary as the test. */
  runNode(script: string, args: readonly string[] = []): RunResult {
    return this.exec([process.execPath, script, ...args]);
  }

  /**
   * Starts a long-lived process in the namespace (kept in `children` for the caller's teardown) and
   * resolves with the first line it prints: readiness by its own signal, never a deadline.
   */
  start(argv: readonly string[], children: ChildProcess[]): Promise<{ child: ChildProcess; line: string }> {
    return new Promise((resolve, reject) => {
      const child = spawnOwned("ip", ["netns", "exec", this.name, ...argv], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      children.push(child);
      child.once("error", reject);
      child.once("exit", (code) => reject(new Error(`${argv.join(" ")} exited ${code} before it was ready`)));
      createInterface({ input: child.stdout! }).once("line", (line) => resolve({ child, line }));
    });
  }

  destroy(): void {
    spawnSync("ip", ["netns", "delete", this.name]);
  }
}

export async function withNetns<T>(body: (ns: NetNs) => Promise<T> | T): Promise<T> {
  const ns = NetNs.create();
  try {
    return await body(ns);
  } finally {
    ns.destroy();
  }
}

/** True when this process may create namespaces (root with CAP_SYS_ADMIN). */
export function netnsAvailable(): boolean {
  return spawnSync("unshare", ["-n", "--", "true"]).status === 0;
}
