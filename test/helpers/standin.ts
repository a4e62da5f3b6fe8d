import { type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "./uml.js";
import { spawnOwned } from "./children.js";
import type { NetNs } from "./netns.js";
import { parseScanOutput } from "./scan-report.js";
import type { NodeReport } from "../../agent/report/schema.js";

// Starts the kube-proxy STAND-IN (test/standins/kube-proxy.ts, built into dist/) — optionally inside a
// network namespace — and hands back its URLs once it printed "ready <metricsPort> <healthPort>".

export const STANDIN = join(REPO_ROOT, "dist/test/standins/kube-proxy.js");
export const AGENT_CLI = join(REPO_ROOT, "dist/agent/cli.js");

export interface RunningStandin {
  metricsUrl: string;
  healthUrl: string;
  /** Replaces the scenario (its counters, times, faults) in the running stand-in; resolves once it answers so. */
  update(scenario: object): Promise<void>;
  stop(): Promise<void>;
}

export async function startStandin(scenario: object, netns?: string): Promise<RunningStandin> {
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-standin-"));
  const file = join(dir, "scenario.json");
  writeFileSync(
    file,
    JSON.stringify({ metricsAddress: "127.0.0.1:0", healthAddress: "127.0.0.1:0", ...scenario }),
  );
  const argv = netns
    ? ["ip", "netns", "exec", netns, process.execPath, STANDIN, file]
    : [process.execPath, STANDIN, file];
  const child: ChildProcess = spawnOwned(argv[0]!, argv.slice(1), { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  // Ready is the stand-in's own "ready" line, or its exit: no deadline a loaded machine could miss
  // (15 s was missed at load 17); a stand-in that never starts is ended by tap's per-file timeout.
  const ports = await new Promise<[number, number]>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /ready (\d+) (\d+)/.exec(out);
      if (m) resolve([Number(m[1]), Number(m[2])]);
    });
    child.on("exit", (code) => reject(new Error(`stand-in exited ${code} before it was ready: ${stderr}`)));
  });
  let reloads = 0;
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  return {
    metricsUrl: `http://127.0.0.1:${ports[0]}`,
    healthUrl: `http://127.0.0.1:${ports[1]}`,
    update: async (next: object) => {
      writeFileSync(
        file,
        JSON.stringify({ metricsAddress: "127.0.0.1:0", healthAddress: "127.0.0.1:0", ...next }),
      );
      const want = `reloaded ${++reloads}\n`;
      // Ready is the stand-in's own line saying so, not a deadline.
      const seen = new Promise<void>((resolve) => {
        const check = () => {
          if (!out.includes(want)) return;
          child.stdout?.off("data", check);
          resolve();
        };
        child.stdout?.on("data", check);
      });
      child.kill("SIGHUP");
      await seen;
    },
    stop: async () => {
      if (child.exitCode === null) {
        const gone = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await gone;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The real agent CLI's `scan --json` inside a namespace, against a stand-in kube-proxy started there for
 * the scan and stopped after it (also when the scan fails).
 */
export async function scanInNetns(
  ns: NetNs,
  kubeProxy: object,
  extra: readonly string[] = [],
  node = "scenario",
): Promise<NodeReport> {
  const standin = await startStandin(kubeProxy, ns.name);
  try {
    const out = ns.runNode(AGENT_CLI, [
      "scan",
      "--json",
      "--node",
      node,
      "--kube-proxy-metrics-url",
      standin.metricsUrl,
      "--kube-proxy-health-url",
      standin.healthUrl,
      ...extra,
    ]);
    if (out.code !== 0) throw new Error(`scan exited ${out.code}: ${out.stderr}`);
    return parseScanOutput(out.stdout);
  } finally {
    await standin.stop();
  }
}
