// bench/results/growth.md from the growth benchmark's results: one row per mode and size (the scan
// beside its floor, both with their environment and load), then the exponents of the growth.
import { exponent, growthVerdict, marginalPer1000, stepExponents, type Point } from "./fit.js";
import type { Row, ScanRep } from "./measure.js";
import { summarize, type Summary } from "../lib/stats.js";

export interface ReadCost {
  argv: string;
  cpuMs: number;
  wallMs: number;
  maxRssMb: number;
  /** The read's exit status (the first failing pass's, else the shell's). */
  exit: number;
}

export interface ModeRow {
  mode: "ipvs" | "nftables";
  n: number;
  recordedAt?: string;
  loadMs?: number | "reused";
  scan: Row<ScanRep[]>;
  /** Per rep: each floor read's cost per pass. */
  floor: Row<ReadCost[][]>;
  scanNft11?: Row<ScanRep[]>;
  /** Per rep: the floor's nft reads with nft 1.1.3 (the other reads are the same binaries). */
  floorNft11Reads?: Row<ReadCost[][]>;
  /** Per rep: `nft list chains` as text (not in the floor; the scan reads the JSON form). */
  textChains?: Row<ReadCost[][]>;
}

export interface GrowthResults {
  machine: Record<string, unknown>;
  loadavgStart: number[];
  loadavgEnd?: number[];
  maxLoad: number;
  reps: number;
  nft11: string | null;
  /** `node -e 0`, CPU ms: the part of every scan that is Node's own start. */
  nodeStart?: Row<number>;
  rows: ModeRow[];
}

const ENV = { ipvs: "replay", nftables: "host netns" } as const;
const num = (v: number, d = 0) => (Number.isFinite(v) ? v.toFixed(d) : "—");
const range = (s: Summary, d = 0) =>
  !Number.isFinite(s.median)
    ? "—"
    : s.min === s.max
      ? num(s.median, d)
      : `${num(s.median, d)} (${num(s.min, d)}–${num(s.max, d)})`;
const load = (r: Row<unknown>) => `${r.env}, load ${r.loadavg[0].toFixed(1)}→${r.loadavg[1].toFixed(1)}`;
const ok = (r: Row<unknown> | undefined): r is Row<unknown> => r !== undefined && r.status === "ok";

/** Per rep, the floor's total CPU per pass. */
export const floorTotals = (reps: readonly ReadCost[][]) =>
  reps.map((rs) => rs.reduce((a, r) => a + r.cpuMs, 0));

/** The 1.1.3 floor: the 1.0.6 floor with its nft reads swapped for 1.1.3's, rep by rep. */
export function nft11FloorTotals(row: ModeRow): number[] {
  const f11 = row.floorNft11Reads?.value ?? [];
  return row.floor.value.map((rs, i) => {
    const other = rs.filter((r) => !r.argv.startsWith("nft ")).reduce((a, r) => a + r.cpuMs, 0);
    return other + (f11[i] ?? []).reduce((a, r) => a + r.cpuMs, 0);
  });
}

const scanOk = (s: ScanRep, mode: ModeRow["mode"]) =>
  s.exit === 0 || (s.phase === mode && s.exit !== null && s.exit < 64);

function points(rows: readonly ModeRow[], f: (r: ModeRow) => number | null): Point[] {
  return rows.flatMap((r) => {
    const v = f(r);
    return v === null || !Number.isFinite(v) ? [] : [{ n: r.n, cost: v }];
  });
}

const step = (s: { from: number; to: number }) =>
  `${s.from.toLocaleString("en")}→${s.to.toLocaleString("en")}`;

function exponentLine(label: string, p: Point[], unit: string): string {
  const steps = stepExponents(p)
    .map((s) => `${step(s)}: ${num(s.k, 2)}`)
    .join(", ");
  const marginal = marginalPer1000(p)
    .map((s) => `${step(s)}: ${num(s.per1000, 1)} ${unit}`)
    .join(", ");
  const v = growthVerdict(p);
  return `| ${label} | ${num(exponent(p), 2)} | ${steps || "—"} | ${marginal || "—"} | ${v.verdict} |`;
}

/** The exponents alone (what the bench prints), or the whole file. */
export function renderGrowth(r: GrowthResults, only?: "exponents"): string {
  const modes = (["ipvs", "nftables"] as const).filter((m) => r.rows.some((x) => x.mode === m));
  const med = (xs: number[]) => summarize(xs).median;
  const exps: string[] = [
    "| cost (mode, environment) | exponent (least squares, all sizes) | between neighbouring sizes | added per 1,000 Services | growth |",
    "|---|---|---|---|---|",
  ];
  for (const m of modes) {
    const rows = r.rows.filter((x) => x.mode === m);
    const scanCpu = (x: ModeRow) => (ok(x.scan) ? med(x.scan.value.map((s) => s.cpuMs)) : null);
    const rss = (x: ModeRow) => (ok(x.scan) ? med(x.scan.value.map((s) => s.maxRssMb)) : null);
    const floor = (x: ModeRow) => (ok(x.floor) ? med(floorTotals(x.floor.value)) : null);
    exps.push(exponentLine(`scan CPU, ${m} (${ENV[m]})`, points(rows, scanCpu), "ms"));
    exps.push(exponentLine(`agent max RSS, ${m} (${ENV[m]})`, points(rows, rss), "MB"));
    exps.push(exponentLine(`floor CPU, ${m} (${ENV[m]})`, points(rows, floor), "ms"));
    if (m === "nftables" && r.nft11) {
      const s11 = (x: ModeRow) => (ok(x.scanNft11) ? med(x.scanNft11.value.map((s) => s.cpuMs)) : null);
      const f11 = (x: ModeRow) => (ok(x.floor) && ok(x.floorNft11Reads) ? med(nft11FloorTotals(x)) : null);
      exps.push(exponentLine(`scan CPU, nftables with nft 1.1.3 (host netns)`, points(rows, s11), "ms"));
      exps.push(exponentLine(`floor CPU, nftables with nft 1.1.3 (host netns)`, points(rows, f11), "ms"));
    }
  }
  if (only === "exponents") return `${exps.join("\n")}\n`;

  const out: string[] = [
    "## How the agent's cost grows: one-shot `scan` at 1,000 / 10,000 / 30,000 Services, both modes",
    "",
    `Run ${String(r.machine.date)} on ${String(r.machine.nproc)} CPUs (${String(r.machine.cpuModel)}), ${String(r.machine.kernel)}, Node ${String(r.machine.node)}; ` +
      `${r.reps} reps a row, medians (min–max). A row measured at a 1-minute load above ${r.maxLoad} reads **rerun** and gives no figure. ` +
      "Scan CPU is user+sys of `node dist/agent/cli.js scan -o json` and every process it waited for (GNU time), Node's start included; " +
      "RSS is the agent's own peak (getrusage at exit). The floor is the sum over the reads the report needs (bench/lib/floor.ts), " +
      "each looped under one GNU time, per pass, in the same run. ipvs mode: the replay (bench/replay: the node recorded once per size in " +
      "User-Mode Linux, `--proc-root`/`--tool-dir` at the record, replayed at the host's speed of `cat`); nftables mode: a network " +
      "namespace on the host kernel holding kube-proxy's table (bench/lib/gen.ts), each Service with 10 endpoints.",
    "",
    ...(r.nodeStart
      ? [
          `Node's own start (\`node -e 0\`), in every scan: ${num(r.nodeStart.value, 1)} ms CPU (${load(r.nodeStart)}).`,
          "",
        ]
      : []),
    "| mode (environment) | N | scan CPU ms | wall ms | agent max RSS MB | floor CPU ms | scan ÷ floor | phase | load |",
    "|---|---|---|---|---|---|---|---|---|",
  ];
  for (const x of r.rows) {
    const s = x.scan.value;
    const bad = s.filter((v) => !scanOk(v, x.mode));
    const cpu = summarize(s.map((v) => v.cpuMs));
    const fl = summarize(floorTotals(x.floor.value));
    const status = ok(x.scan) && ok(x.floor) ? "" : " **rerun**";
    out.push(
      `| ${x.mode} (${ENV[x.mode]}) | ${x.n.toLocaleString("en")} | ${ok(x.scan) ? range(cpu) : "**rerun**"} | ${range(summarize(s.map((v) => v.wallMs)))} | ${range(summarize(s.map((v) => v.maxRssMb)), 1)} | ${ok(x.floor) ? range(fl) : "**rerun**"} | ${status ? "—" : num(cpu.median / fl.median, 2) + "×"} | ${[...new Set(s.map((v) => v.phase ?? "no report"))].join(", ")}${bad.length ? ` (${bad.length} failed)` : ""} | ${load(x.scan)}; floor ${load(x.floor)} |`,
    );
  }
  out.push(
    "",
    "Exponent of growth (slope of log cost on log N: 1 is linear; a fixed cost pulls it below 1):",
    "",
    ...exps,
  );
  const nft = r.rows.filter((x) => x.mode === "nftables" && x.scanNft11);
  if (nft.length > 0) {
    out.push(
      "",
      `nftables mode with ${r.nft11 ?? "nft 1.1"} from a private root (scripts/nft11-root.sh; the agent's \`--tool-dir\` with its wrapper first), beside the system's nft 1.0.6, same namespace, same run:`,
      "",
      "| N | scan CPU ms, 1.0.6 | floor CPU ms, 1.0.6 | ratio | scan CPU ms, 1.1.3 | floor CPU ms, 1.1.3 | ratio | load (1.1.3 rows) |",
      "|---|---|---|---|---|---|---|---|",
    );
    for (const x of nft) {
      const s10 = summarize(x.scan.value.map((v) => v.cpuMs));
      const f10 = summarize(floorTotals(x.floor.value));
      const s11 = summarize(x.scanNft11!.value.map((v) => v.cpuMs));
      const f11 = summarize(nft11FloorTotals(x));
      const good = ok(x.scanNft11) && ok(x.floorNft11Reads) && ok(x.floor);
      const good10 = ok(x.scan) && ok(x.floor);
      out.push(
        `| ${x.n.toLocaleString("en")} | ${good10 ? range(s10) : "**rerun**"} | ${good10 ? range(f10) : "—"} | ${good10 ? `${num(s10.median / f10.median, 2)}×` : "—"} | ${good ? range(s11) : "**rerun**"} | ${good ? range(f11) : "—"} | ${good ? num(s11.median / f11.median, 2) + "×" : "—"} | ${load(x.scanNft11!)} |`,
      );
    }
  }
  const reads = r.rows.filter((x) => x.floor.value.length > 0);
  if (reads.length > 0) {
    out.push("", "The floor read by read (CPU ms per pass, median of the reps):", "");
    const sizes = reads.map((x) => `${x.mode} ${x.n.toLocaleString("en")}`);
    out.push(`| read | ${sizes.join(" | ")} |`, `|---|${sizes.map(() => "---|").join("")}`);
    const argvs = [...new Set(reads.flatMap((x) => x.floor.value[0]!.map((c) => c.argv)))];
    const cell = (x: ModeRow, a: string, from: ReadCost[][] | undefined) => {
      const found = (from ?? []).flatMap((rep) => rep.filter((c) => c.argv === a));
      const failed = found.find((c) => c.exit !== 0);
      return found.length
        ? `${num(med(found.map((c) => c.cpuMs)), 1)}${failed ? ` (exit ${failed.exit})` : ""}`
        : "";
    };
    for (const a of argvs)
      out.push(`| \`${a}\` | ${reads.map((x) => cell(x, a, x.floor.value)).join(" | ")} |`);
    if (nft.length > 0)
      for (const a of [
        ...new Set(nft.flatMap((x) => (x.floorNft11Reads?.value[0] ?? []).map((c) => c.argv))),
      ])
        out.push(
          `| \`${a}\` (1.1.3) | ${reads.map((x) => cell(x, a, x.floorNft11Reads?.value)).join(" | ")} |`,
        );
  }
  for (const x of r.rows.filter((y) => y.textChains)) {
    const t = x.textChains!;
    const forms = [...new Set(t.value.flatMap((rep) => rep.map((c) => c.argv)))].map((a) => {
      const v = t.value.flatMap((rep) => rep.filter((c) => c.argv === a).map((c) => c.cpuMs));
      return `\`${a}\` ${range(summarize(v))} ms`;
    });
    out.push(
      "",
      `The chain listing as text at ${x.n.toLocaleString("en")} (not in the floor: the scan reads \`nft -j list chains\`), CPU per read: ${ok(t) ? forms.join("; ") : "**rerun**"} (${load(t)}).`,
    );
  }
  return `${out.join("\n")}\n`;
}
