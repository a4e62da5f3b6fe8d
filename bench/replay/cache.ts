// The replay's record: ipvs-mode nodes at several sizes, recorded ONCE in one User-Mode Linux boot
// (the state grows in place: 1,000, then 10,000, ...), kept in a cache directory outside the
// repository. Each size's directory holds what bench/replay/record.ts saved, plus the replay tools
// written here: one small /bin/sh program per tool that prints the recorded bytes with /bin/cat.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import type { RecordedCall } from "./record.js";
import { bootUmlBench } from "../lib/uml.js";
import { IPVS_GUEST_MODULES, ipvsGuestAdd, ipvsGuestBase } from "../lib/ipvs-guest.js";

export interface Manifest {
  services: number;
  recordedAt: string;
  kernel: string;
  scan: { phase: string; verdict: string; failedProbes: string[] };
  calls: RecordedCall[];
  procFiles: Record<string, number>;
  procTimed: Record<string, { umlWallMs: number[]; umlCpuMs: number[] }>;
  sysctls: number;
  /** The host's 1-minute load average when the boot started and ended. */
  hostLoadavg?: [number, number];
}

export const DEFAULT_CACHE = "/var/tmp/proxyscope-replay";
export const sizeDir = (cache: string, n: number) => `${cache}/ipvs-${n}`;

export function readManifest(dir: string): Manifest | null {
  const f = `${dir}/manifest.json`;
  return existsSync(f) ? (JSON.parse(readFileSync(f, "utf8")) as Manifest) : null;
}

/** Records every size not in the cache yet, in one boot; the guest's console goes to the cache. */
export async function recordMissing(
  cache: string,
  sizes: readonly number[],
  endpoints: number,
  repo: string,
  log: (m: string) => void,
): Promise<void> {
  const missing = [...sizes].sort((a, b) => a - b).filter((n) => readManifest(sizeDir(cache, n)) === null);
  if (missing.length === 0) return;
  mkdirSync(cache, { recursive: true });
  const work = mkdtempSync(`${cache}/boot-`);
  try {
    let script = ipvsGuestBase(work, repo);
    let have = 0;
    for (const n of missing) {
      script += ipvsGuestAdd(work, have, n, endpoints);
      rmSync(sizeDir(cache, n), { recursive: true, force: true });
      script += `node ${repo}/dist/bench/replay/record.js --out ${sizeDir(cache, n)} --services ${n}\n`;
      have = n;
    }
    const load0 = loadavg()[0]!;
    log(`recording ipvs-mode state at ${missing.join(", ")} Services in one UML boot (${work})`);
    const boot = await bootUmlBench({
      repoRoot: repo,
      workDir: work,
      script,
      memMb: 4096,
      timeoutMs: 60 * 60_000,
      modules: IPVS_GUEST_MODULES,
      consoleLog: `${cache}/record-console.log`,
    });
    log(`guest finished rc=${boot.exitCode} in ${(boot.durationMs / 1000).toFixed(0)} s`);
    for (const n of missing) {
      const m = readManifest(sizeDir(cache, n));
      if (m === null) throw new Error(`no record for ${n} Services (see ${cache}/record-console.log)`);
      // The host's load while the guest timed the tools: their UML figures are only as quiet as it.
      m.hostLoadavg = [load0, loadavg()[0]!];
      writeFileSync(`${sizeDir(cache, n)}/manifest.json`, JSON.stringify(m, null, 1));
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The replay tools of one record: `<dir>/tools/<tool>`, a /bin/sh `case` on its arguments that execs
 * /bin/cat on the recorded output (the host's speed of a plain `cat`, not the tool's speed in UML) and
 * exits with the recorded code. An argv not recorded is logged to <dir>/misses.log and fails (127),
 * so a scan that asks for something else shows it instead of reading nothing.
 */
export function writeReplayTools(dir: string, m: Manifest): string {
  const tools = `${dir}/tools`;
  rmSync(tools, { recursive: true, force: true });
  mkdirSync(tools, { recursive: true });
  const byTool = new Map<string, RecordedCall[]>();
  for (const c of m.calls) byTool.set(c.tool, [...(byTool.get(c.tool) ?? []), c]);
  for (const [tool, calls] of byTool) {
    const arms = calls.map((c) => {
      const out = `${dir}/${c.stdoutFile}`;
      const err = `${dir}/${c.stderrFile}`;
      const hasErr = existsSync(err) && readFileSync(err).length > 0;
      const body =
        c.exit === 0 && !hasErr
          ? `exec /bin/cat ${q(out)}`
          : `/bin/cat ${q(out)}; ${hasErr ? `/bin/cat ${q(err)} >&2; ` : ""}exit ${c.exit}`;
      return `${q(c.args.join(" "))}) ${body} ;;`;
    });
    writeFileSync(
      `${tools}/${tool}`,
      [
        "#!/bin/sh",
        `# replay of ${tool} as recorded in User-Mode Linux at ${m.services} Services (bench/replay)`,
        'case "$*" in',
        ...arms,
        "esac",
        `echo "${tool} $*" >> ${q(`${dir}/misses.log`)}`,
        `echo "replay: ${tool} $*: not recorded" >&2`,
        "exit 127",
        "",
      ].join("\n"),
      { mode: 0o755 },
    );
  }
  return tools;
}
