// bench/results/<name>.md for the replay benchmark: every row with its environment and load average;
// a row measured above the load limit reads "rerun" and gives no figure.
import { summarize } from "../lib/stats.js";

interface Row<T> {
  env: string;
  loadavg: [number, number];
  status: "ok" | "rerun";
  value: T;
}
interface Scan {
  cpuMs: number;
  wallMs: number;
  maxRssMb: number;
  failedProbes: string[];
  phase: string | null;
  verdict: string | null;
}
interface Loop {
  cpuMs: number;
  wallMs: number;
}

interface IpvsSize {
  umlScan: { phase: string; verdict: string; failedProbes: string[] };
  umlTools: {
    calls: { argv: string; by: string[]; cpuMs: number[] }[];
    procCat: Record<string, { umlCpuMs: number[] } | undefined>;
    hostLoadavg: [number, number] | null;
  };
  scan?: Row<Scan[]>;
  floor?: Row<Loop[]>;
  /** `node` running an empty module, in the same rounds as the scan and the floor (older runs: absent). */
  nodeStart?: Row<Loop[]>;
  /** The scan before the rounds, which fills the compile cache (older runs: absent). */
  firstScan?: Row<Scan>;
  sameBytes?: Row<Loop[]>;
  misses?: string[];
}
interface EventLoop {
  maxMs: number;
  worstP99Ms: number;
  medianP99Ms: number;
  intervals: number;
  over5ms: number;
}
interface Latency {
  requests: number;
  errors: number;
  p50: number;
  p99: number;
  max: number;
  eventLoop: EventLoop;
}
interface Serve {
  window: {
    windowS: number;
    scans: number;
    agentCpuSPerHour: number;
    replayToolsCpuSPerHour: number;
    totalCpuSPerHour: number;
    hourWithFullReadCpuS: number;
    toReady: { selfMs: number; childMs: number; wallMs: number };
    nodeExporter: {
      cpuSPerHour: number;
      series: number;
      ipvsSeries: number;
      rssMb: number;
      withoutIpvsCpuSPerHour: number;
    };
    rssMb: { median: number; max: number };
    hwmMb: number;
    memory: {
      rss: number;
      rssAnon: number;
      rssFile: number;
      mainHeapTotal: number;
      mainHeapUsed: number;
      workerHeapTotal: number;
      workerHeapUsed: number;
      external: number;
      malloced: number;
    };
    sourceAges: string[];
  };
  metricsP99: {
    seconds: number;
    clients: number;
    rps: number;
    bytes: number;
    /** The agent with no scan in the phase (scansUnderLoad says none landed). */
    agent: Latency & { scansUnderLoad?: number };
    /** The agent with scans landing every intervalS. */
    scanning?: Latency & { scansUnderLoad: number; intervalS: number };
    bare: Latency;
    /** Older results: one agent phase, scans landing as they came. */
    scansUnderLoad?: number;
  } | null;
}
interface NftSize {
  scan: Row<Scan[]>;
  scanNft11?: Row<Scan[]>;
  nft11ListChains?: Row<Loop[]>;
  nft10ListChains?: Row<Loop[]>;
}
export interface ReplayResults {
  machine?: { date?: string; nproc?: number; cpuModel?: string; kernel?: string; node?: string };
  maxLoad?: number;
  floorLoops?: number;
  nodeStart?: Row<Loop>;
  ipvs?: Record<string, IpvsSize>;
  serve?: Row<Serve> & { services: number };
  nft?: Record<string, NftSize>;
}

const f0 = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : "—");
const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : "—");
const f2 = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : "—");
const med = (xs: number[]) => summarize(xs).median;
const spread = (xs: number[], f = f0) => {
  const s = summarize(xs);
  return s.n > 1 ? `${f(s.median)} (${f(s.min)}–${f(s.max)})` : f(s.median);
};
const load = (r: Row<unknown>) => `${r.env}, load ${f1(r.loadavg[0])}→${f1(r.loadavg[1])}`;
const gated = (r: Row<unknown> | undefined, text: () => string) =>
  r === undefined ? "not measured" : r.status === "rerun" ? `**rerun** (${load(r)})` : text();

/** The tools' cost in UML, apart from the agent's; like every figure, not given above the load limit. */
function umlCell(l: [number, number] | null, max: number, tools: number, ipVs: number): string {
  if (l === null) return "**rerun** (host load not recorded)";
  const where = `UML, host load ${l.map(f1).join("→")}`;
  if (Math.max(...l) > max) return `**rerun** (${where})`;
  return `its tools ${f0(tools)}, \`cat /proc/net/ip_vs\` ${f0(ipVs)} (${where})`;
}

/** Least-squares slope of log(y) on log(x): how cost grows with N (1 = linear). */
export function logLogSlope(pts: [number, number][]): number {
  const p = pts.filter(([x, y]) => x > 0 && y > 0 && Number.isFinite(y));
  if (p.length < 2) return Number.NaN;
  const lx = p.map(([x]) => Math.log(x));
  const ly = p.map(([, y]) => Math.log(y));
  const mx = lx.reduce((a, b) => a + b, 0) / p.length;
  const my = ly.reduce((a, b) => a + b, 0) / p.length;
  let num = 0;
  let den = 0;
  for (let i = 0; i < p.length; i++) {
    num += (lx[i]! - mx) * (ly[i]! - my);
    den += (lx[i]! - mx) ** 2;
  }
  return num / den;
}

const eld = (e: EventLoop) =>
  `longest ${f1(e.maxMs)} ms, p99 ${f1(e.medianP99Ms)} median / ${f1(e.worstP99Ms)} worst (${e.over5ms} of ${e.intervals} 250 ms intervals with a block over 5 ms)`;

/** `serve` on the record: CPU an hour beside node_exporter, where the memory is, /metrics against a bare server. */
function renderServe(sv: Row<Serve> & { services: number }): string[] {
  const L: string[] = [];
  const n = Number(sv.services).toLocaleString("en-US");
  L.push(
    `\`serve\` at its defaults on the ${n}-Service record (${load(sv)}), the kube-proxy stand-in answering ipvs mode with nothing pending (the gate reuses the deep reads between kube-proxy's changes; a full read every 3,600 s), beside node_exporter with its default collectors (its ipvs collector reading the same recorded \`/proc/net/ip_vs\` through a /proc of symlinks) and a second one without the ipvs collector, all scraped every 30 s. CPU is user+sys from \`/proc/PID/stat\`, both threads; the tools are the agent's reaped children.`,
    "",
  );
  if (sv.status === "rerun") {
    L.push(`**rerun** (${load(sv)}): no figure.`, "");
    return L;
  }
  const w = sv.value.window;
  const ne = w.nodeExporter;
  L.push(
    "| window | scans | agent CPU-s/h (window) | + one full read an hour | agent's replay tools CPU-s/h | node_exporter CPU-s/h (series) | agent ÷ node_exporter | node_exporter without ipvs CPU-s/h | RSS MB median / max / HWM |",
    "|---|---|---|---|---|---|---|---|---|",
    `| ${f0(w.windowS)} s | ${w.scans} | ${f1(w.agentCpuSPerHour)} | **${f1(w.hourWithFullReadCpuS)}** (start to ready: ${f0(w.toReady.selfMs + w.toReady.childMs)} ms CPU) | ${f1(w.replayToolsCpuSPerHour)} | ${f1(ne.cpuSPerHour)} (${ne.series.toLocaleString("en-US")}, ${ne.ipvsSeries.toLocaleString("en-US")} of them node_ipvs_*; RSS ${f0(ne.rssMb)} MB) | ${f2(w.hourWithFullReadCpuS / ne.cpuSPerHour)}× | ${f2(ne.withoutIpvsCpuSPerHour)} | ${f1(w.rssMb.median)} / ${f1(w.rssMb.max)} / ${f1(w.hwmMb)} |`,
    "",
  );
  const m = w.memory;
  L.push(
    `Where the agent's resident memory is at the window's end (MB): RSS ${f1(m.rss)} = file pages ${f1(m.rssFile)} (the node binary and the modules' code, shared and clean) + anonymous ${f1(m.rssAnon)}, of which the serving thread's V8 heap ${f1(m.mainHeapTotal)} (${f1(m.mainHeapUsed)} used), the scan thread's ${f1(m.workerHeapTotal)} (${f1(m.workerHeapUsed)} used: the reused reads live there), external and array buffers ${f1(m.external)}, V8's malloc ${f1(m.malloced)}; the rest is code space, stacks and the allocator's own.`,
    "",
    `Sources of the last report: ${w.sourceAges.map((l) => `\`${l.replace("proxyscope_source_age_seconds", "")}\``).join(", ")}.`,
    "",
  );
  const p = sv.value.metricsP99;
  if (p !== null) L.push(...renderP99(p));
  return L;
}

function renderP99(p: NonNullable<Serve["metricsP99"]>): string[] {
  const older = p.scanning === undefined;
  const rows: [string, Latency][] = older
    ? [[`the agent (still scanning: ${p.scansUnderLoad ?? "?"} scans landed)`, p.agent]]
    : [
        [`the agent, no scan in the phase (${p.agent.scansUnderLoad ?? "?"} landed)`, p.agent],
        [
          `the agent, a scan every ${p.scanning!.intervalS} s (${p.scanning!.scansUnderLoad} landed)`,
          p.scanning!,
        ],
      ];
  rows.push(["bare node:http, same bytes", p.bare]);
  return [
    older
      ? `\`/metrics\` (${p.bytes.toLocaleString("en-US")} bytes) under ${p.clients} clients paced to ${p.rps} requests/s for ${p.seconds} s each, the agent and then a bare \`node:http\` server serving the same bytes, the same event-loop monitor in both:`
      : `\`/metrics\` (${p.bytes.toLocaleString("en-US")} bytes) under ${p.clients} clients paced to ${p.rps} requests/s for ${p.seconds} s each: the agent with no scan in the phase (its next scan an hour away), the agent with scans landing, then a bare \`node:http\` server serving the same bytes, the same event-loop monitor in each:`,
    "",
    "| server | requests (errors) | p50 ms | p99 ms | max ms | serving thread's event loop |",
    "|---|---|---|---|---|---|",
    ...rows.map(
      ([name, x]) =>
        `| ${name} | ${x.requests} (${x.errors}) | ${f2(x.p50)} | ${f2(x.p99)} | ${f1(x.max)} | ${eld(x.eventLoop)} |`,
    ),
    "",
    older
      ? `p99 ratio, agent ÷ bare: **${f2(p.agent.p99 / p.bare.p99)}×**.`
      : `p99 ratio, agent ÷ bare: **${f2(p.agent.p99 / p.bare.p99)}×** with no scan in the phase; ${f2(p.scanning!.p99 / p.bare.p99)}× with scans landing.`,
    "",
  ];
}

export function renderReplay(r: ReplayResults): string {
  const L: string[] = [];
  const m = r.machine ?? {};
  L.push(`## Replay benchmark: the agent in ipvs mode at the host's speed`, "");
  L.push(
    `Run ${m.date} on ${m.nproc} CPUs (${m.cpuModel}), ${m.kernel}, Node ${m.node}. A row measured at a 1-minute load above ${r.maxLoad} is marked **rerun** and gives no figure.`,
    "",
    `ipvs mode is recorded once in User-Mode Linux (bench/replay/record.ts: every tool call of one scan and every read of the ipvs floor, byte for byte with its exit code; the /proc and /sys files the agent reads) and replayed on the host in an empty network namespace: \`--proc-root\`/\`--sys-root\` at the recorded files, \`--tool-dir\` at replay programs (\`/bin/sh\` + \`/bin/cat\` of the recorded output: the host's speed of a plain \`cat\`, not the tools' speed in UML). kube-proxy is not in the record (none runs in the UML bench): its URLs point at a closed port. Scan CPU is user+sys of \`node dist/agent/cli.js scan -o json\` and every process it waited for (GNU time), Node's start included; the floor is the ipvs floor's reads (bench/lib/floor.ts) replayed the same way, ${r.floorLoops} passes under one GNU time. The tools' own cost is the UML column, apart.`,
    "",
  );
  const ns = r.nodeStart;
  if (ns)
    L.push(
      `Node's start (\`node -e 0\`): ${gated(ns, () => `${f1(ns.value.cpuMs)} ms CPU (${load(ns)})`)}.`,
      "",
    );
  L.push(
    "The one-shot rows run in rounds, each the agent's scan (the compile cache on, as the image runs it: `PROXYSCOPE_COMPILE_CACHE`), the floor and Node's start (`node` running an empty module) one after the other; the first scan, which fills the cache, is kept apart. Medians, with the range.",
    "",
    "| N | agent `scan` CPU ms | wall ms | max RSS MB | floor CPU ms (replayed) | scan ÷ floor | Node's start CPU ms (same rounds) | scan ÷ floor, Node's start taken out | first scan (cache filled) CPU ms | the scan's own reads replayed, CPU ms | report as in UML | tools' CPU in UML, ms (apart) |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|",
  );
  const ipvsPts: [number, number][] = [];
  const ipvsRss: [number, number][] = [];
  for (const [n, x] of Object.entries(r.ipvs ?? {})) {
    const sc = x.scan;
    const fl = x.floor;
    const sb = x.sameBytes;
    const ok = sc?.status === "ok" ? sc : undefined;
    const scanCpu = sc?.value.map((s) => s.cpuMs) ?? [];
    const floorCpu = fl?.value.map((s) => s.cpuMs) ?? [];
    const st = x.nodeStart;
    const startCpu = st?.value.map((s) => s.cpuMs) ?? [];
    const fs = x.firstScan;
    const measured = sc?.status === "ok" && fl?.status === "ok";
    if (sc?.status === "ok") {
      ipvsPts.push([Number(n), med(scanCpu)]);
      ipvsRss.push([Number(n), med(sc.value.map((s) => s.maxRssMb))]);
    }
    const same =
      sc?.value.every(
        (s) =>
          s.phase === x.umlScan.phase &&
          s.verdict === x.umlScan.verdict &&
          s.failedProbes.join() === x.umlScan.failedProbes.join(),
      ) && (x.misses ?? []).length === 0;
    const umlScanTools = x.umlTools.calls
      .filter((c) => c.by.includes("scan"))
      .reduce((a, c) => a + med(c.cpuMs), 0);
    const umlIpVs = med(x.umlTools.procCat["net/ip_vs"]?.umlCpuMs ?? []);
    L.push(
      `| ${Number(n).toLocaleString("en-US")} | ${gated(sc, () => `${spread(scanCpu)} (${load(sc!)})`)} | ${ok ? spread(ok.value.map((s) => s.wallMs)) : "—"} | ${
        ok
          ? spread(
              ok.value.map((s) => s.maxRssMb),
              f1,
            )
          : "—"
      } | ${gated(fl, () => `${spread(floorCpu, f1)} (${load(fl!)})`)} | ${measured ? `${f1(med(scanCpu) / med(floorCpu))}×` : "—"} | ${gated(st, () => spread(startCpu, f1))} | ${measured && st?.status === "ok" ? `${f1((med(scanCpu) - med(startCpu)) / med(floorCpu))}×` : "—"} | ${gated(fs, () => f0(fs!.value.cpuMs))} | ${gated(
        sb,
        () =>
          spread(
            sb!.value.map((s) => s.cpuMs),
            f1,
          ),
      )} | ${same ? "yes" : `**no**: ${sc?.value[0]?.failedProbes.join(", ")} vs ${x.umlScan.failedProbes.join(", ")}; misses ${(x.misses ?? []).join("; ")}`} | ${umlCell(x.umlTools.hostLoadavg, r.maxLoad ?? 2, umlScanTools, umlIpVs)} |`,
    );
  }
  L.push("");
  if (r.serve) L.push(...renderServe(r.serve));
  const nftPts: [number, number][] = [];
  const nftRss: [number, number][] = [];
  const nftRows: string[] = [];
  for (const [n, x] of Object.entries(r.nft ?? {})) {
    const sc = x.scan;
    const cpu = sc.value.map((s) => s.cpuMs);
    if (sc.status === "ok") {
      nftPts.push([Number(n), med(cpu)]);
      nftRss.push([Number(n), med(sc.value.map((s) => s.maxRssMb))]);
    }
    const n11 = x.scanNft11;
    const c11 = x.nft11ListChains;
    const c10 = x.nft10ListChains;
    nftRows.push(
      `| ${Number(n).toLocaleString("en-US")} | ${gated(sc, () => `${spread(cpu)} (${load(sc)})`)} | ${
        sc.status === "ok"
          ? spread(
              sc.value.map((s) => s.maxRssMb),
              f1,
            )
          : "—"
      } | ${gated(n11, () => `${spread(n11!.value.map((s) => s.cpuMs))} (${load(n11!)})`)} | ${gated(c10, () => spread(c10!.value.map((s) => s.cpuMs)))} | ${gated(c11, () => spread(c11!.value.map((s) => s.cpuMs)))} |`,
    );
  }
  L.push(
    "How cost grows: one-shot `scan`, medians; the exponent is the least-squares slope of log(cost) on log(N) (1 = linear).",
    "",
    "| mode (environment) | " +
      [1000, 10000, 30000].map((n) => `${n.toLocaleString("en-US")}: CPU ms, RSS MB`).join(" | ") +
      " | CPU exponent | RSS exponent |",
    "|---|---|---|---|---|---|",
  );
  const growth = (name: string, cpu: [number, number][], rss: [number, number][]) => {
    const at = (pts: [number, number][], n: number) => pts.find(([x]) => x === n)?.[1] ?? Number.NaN;
    L.push(
      `| ${name} | ${[1000, 10000, 30000].map((n) => `${f0(at(cpu, n))}, ${f1(at(rss, n))}`).join(" | ")} | ${f2(logLogSlope(cpu))} | ${f2(logLogSlope(rss))} |`,
    );
  };
  growth("ipvs (replay)", ipvsPts, ipvsRss);
  growth("nftables (host netns, nft 1.0.6)", nftPts, nftRss);
  L.push("");
  if (nftRows.length) {
    L.push(
      "nftables mode, host network namespace: the agent with the system's nft 1.0.6 and with trixie's nft 1.1.3 from a private root (scripts/nft11-root.sh; `--tool-dir` with its wrapper first), and `nft -j list chains` alone with each:",
      "",
      "| N | `scan` CPU ms, nft 1.0.6 | max RSS MB | `scan` CPU ms, nft 1.1.3 | `nft -j list chains` CPU ms, 1.0.6 | the same, 1.1.3 |",
      "|---|---|---|---|---|---|",
      ...nftRows,
      "",
    );
  }
  return L.join("\n") + "\n";
}

// `node dist/bench/replay/render.js A.json [B.json ...]`: one Markdown of several replay runs (e.g. the
// ipvs rows and the nftables rows measured apart), each row keeping its own load and environment.
if (process.argv[1]?.endsWith("render.js")) {
  const { readFileSync } = await import("node:fs");
  const runs = process.argv.slice(2).map((f) => JSON.parse(readFileSync(f, "utf8")) as ReplayResults);
  const merged: ReplayResults = { ...runs[0] };
  for (const r of runs.slice(1)) {
    merged.ipvs = { ...merged.ipvs, ...r.ipvs };
    merged.nft = { ...merged.nft, ...r.nft };
    merged.serve ??= r.serve;
    merged.nodeStart = merged.nodeStart?.status === "ok" ? merged.nodeStart : r.nodeStart;
  }
  process.stdout.write(renderReplay(merged));
}
