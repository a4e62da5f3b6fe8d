import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChildProcess } from "node:child_process";
import { stopOwned } from "./children.js";
import { withNetns } from "./netns.js";
import { AGENT_CLI, STANDIN } from "./standin.js";

// `cleanup --apply` by the real agent CLI against REAL listeners in a fresh network namespace: each
// listener is the kube-proxy STAND-IN (test/standins/kube-proxy.ts) started as a process the interlock
// takes for kube-proxy (a copy of node named `kube-proxy`, as root) or not (plain `node`, or as nobody).
// The namespace holds no ipvs state and the agent gets no tools: an accepted cleanup changes nothing.

export interface InterlockListener {
  /** "kube-proxy": a copy of the node binary named kube-proxy; "node": node itself. */
  binary: "kube-proxy" | "node";
  /** "nobody": started under setpriv as uid/gid 65534. */
  user: "root" | "nobody";
  /** The stand-in's scenario (mode, version, metricsAddress, healthAddress, ...). */
  scenario: object;
}

export interface InterlockRun {
  code: number;
  /** The agent's stdout then stderr. */
  out: string;
  /** Each listener's pid, in the order given. */
  pids: number[];
}

/**
 * In a new namespace with lo up and `setup` run (e.g. a dummy link holding a node address): starts the
 * listeners one after the other (each once it printed "ready": a signal, not a deadline), runs
 * `cleanup --apply` against `metricsUrl`/`healthUrl`, and stops them all, also when something fails.
 */
export async function cleanupAgainstListeners(
  listeners: readonly InterlockListener[],
  opts: { metricsUrl: string; healthUrl: string; setup?: readonly string[][] },
): Promise<InterlockRun> {
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-interlock-"));
  chmodSync(dir, 0o755); // an unprivileged listener runs its binary and reads its scenario here
  const kubeProxy = join(dir, "kube-proxy");
  copyFileSync(process.execPath, kubeProxy);
  mkdirSync(join(dir, "no-tools"));
  const children: ChildProcess[] = [];
  try {
    return await withNetns(async (ns) => {
      ns.must(["ip", "link", "set", "lo", "up"]);
      for (const argv of opts.setup ?? []) ns.must(argv);
      const pids: number[] = [];
      for (const [i, l] of listeners.entries()) {
        const file = join(dir, `scenario-${i}.json`);
        writeFileSync(file, JSON.stringify(l.scenario));
        const user =
          l.user === "nobody" ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : [];
        // Not tap's instrumentation: it writes under .tap/, which an unprivileged listener may not.
        const argv = ["env", "NODE_OPTIONS=", ...user];
        argv.push(l.binary === "kube-proxy" ? kubeProxy : process.execPath, STANDIN, file);
        const { child, line } = await ns.start(argv, children);
        if (!/^ready \d+ \d+$/.test(line)) throw new Error(`listener ${i} printed ${JSON.stringify(line)}`);
        pids.push(child.pid!);
      }
      const r = ns.exec([
        process.execPath,
        AGENT_CLI,
        "cleanup",
        "--apply",
        "--node",
        "interlock",
        "--tool-dir",
        join(dir, "no-tools"),
        "--kube-proxy-metrics-url",
        opts.metricsUrl,
        "--kube-proxy-health-url",
        opts.healthUrl,
        "--call-timeout-ms",
        "60000",
        "--probe-timeout-ms",
        "120000",
      ]);
      return { code: r.code, out: `${r.stdout}\n${r.stderr}`, pids };
    });
  } finally {
    await Promise.all(children.map((c) => stopOwned(c)));
    rmSync(dir, { recursive: true, force: true });
  }
}
