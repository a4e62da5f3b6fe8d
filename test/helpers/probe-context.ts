import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Test } from "tap";
import { ToolRunner } from "../../agent/io/run.js";
import { probeOptions, type ProbeOptions, type ProbeSettings } from "../../agent/probes/options.js";
import type { ProbeContext } from "../../agent/probes/types.js";
import { toolDir, type ToolDir } from "./tool-scripts.js";

// What every probe test builds its context from: recorded fixture trees under test/fixtures/ (laid out
// like the host's /, /proc and /sys) and scratch trees for the cases a recording cannot hold.

export type Tree = { [name: string]: string | Tree };

/** A path under test/fixtures/. */
export const fixture = (rel: string): string => fileURLToPath(new URL(`../fixtures/${rel}`, import.meta.url));

/** A fresh temp directory holding `spec`, removed when `t` ends. */
export function tree(t: Test, spec: Tree = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-probe-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  fill(dir, spec);
  return dir;
}

function fill(dir: string, spec: Tree): void {
  for (const [name, v] of Object.entries(spec)) {
    if (typeof v === "string") writeFileSync(join(dir, name), v);
    else {
      mkdirSync(join(dir, name), { recursive: true });
      fill(join(dir, name), v);
    }
  }
}

/** A context over the recorded host fixture, no tools, kube-proxy unreachable; `over` replaces parts. */
export function probeContext(over: Partial<ProbeContext> = {}): ProbeContext {
  return {
    hostRoot: fixture("host"),
    procRoot: fixture("host/proc"),
    sysRoot: fixture("host/sys"),
    tools: new ToolRunner([fixture("no-such-tool-dir")]),
    callTimeoutMs: 10_000,
    prior: {},
    ...over,
  };
}

/** The agent's settings with kube-proxy unreachable, no --node-ip and parity off; `over` replaces parts. */
export function probeSettings(over: Partial<ProbeSettings> = {}): ProbeSettings {
  return {
    kubeProxyMetricsUrl: "http://127.0.0.1:1",
    kubeProxyHealthUrl: "http://127.0.0.1:1",
    nodeIPs: [],
    parity: null,
    ...over,
  };
}

/** The options probe `name` runs with under `probeSettings(over)`, built as a scan builds them. */
export function optionsOf<N extends keyof ProbeOptions>(
  name: N,
  over: Partial<ProbeSettings> = {},
): ProbeOptions[N] {
  return probeOptions(probeSettings(over))[name];
}

/** Stand-in tools printing recorded answers (test/helpers/tool-scripts.ts), removed when `t` ends. */
export function stubTools(t: Test, spec: Parameters<typeof toolDir>[0]): ToolDir {
  const d = toolDir(spec);
  t.teardown(d.remove);
  return d;
}

/** A context that reads only the given /proc and /sys trees and the stand-in tools: nothing of this host. */
export function isolatedContext(over: { procRoot?: string; sysRoot?: string; tools: ToolDir }): ProbeContext {
  return probeContext({
    hostRoot: "/nonexistent",
    procRoot: over.procRoot ?? "/nonexistent",
    sysRoot: over.sysRoot ?? "/nonexistent",
    tools: over.tools.runner,
  });
}
