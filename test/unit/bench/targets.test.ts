import t from "tap";
import { ipvsFloor, nftFloor } from "../../../bench/lib/floor.js";
import {
  judge,
  missedLimits,
  renderTargets,
  rssFigures,
  targetRows,
  verdictText,
  type TargetRow,
} from "../../../bench/lib/targets.js";
import { renderMarkdown } from "../../../bench/report.js";

// The benchmark's verdict logic, pure, on results written by hand in the benchmark's own format:
// never a timing of this machine.

const scans = (wallMs: number, cpuMs: number) => [
  { wallMs, cpuMs, selfCpuMs: cpuMs / 2, toolsCpuMs: cpuMs / 2, maxRssMb: 90 },
  { wallMs: wallMs + 20, cpuMs: cpuMs + 20, selfCpuMs: cpuMs / 2, toolsCpuMs: cpuMs / 2, maxRssMb: 92 },
];
const floor = (wallMs: number, cpuMs: number) =>
  [0, 1].map(() => ({ wallMs, cpuMs, reads: [{ wallMs, cpuMs }] }));
const lat = (ms: number) => ({
  latencyMs: { "/metrics": Array(100).fill(ms), "/report": Array(100).fill(ms) },
});

function results() {
  return {
    machine: {
      date: "2026-12-01T22:00:00Z",
      nproc: 2,
      cpuModel: "cpu",
      memoryGb: 1,
      kernel: "Linux",
      node: "v26",
    },
    plan: {
      services: 10000,
      reps: 2,
      cpuHourS: 600,
      loadS: 30,
      rssScans: 1000,
      fleetNodes: 5000,
      promNodes: 50000,
    },
    loadavg: {
      start: [1, 2, 3],
      end: [4, 5, 6],
      nft: { start: [1, 1, 1], end: [2, 2, 2] },
      ipvs: { start: [1, 1, 1], end: [1, 1, 1] },
      fleet: { start: [1, 1, 1], end: [1, 1, 1] },
    },
    nft: {
      10000: {
        scans: scans(1000, 800),
        floorReads: [{ argv: ["nft", "-j", "list", "chains"], why: "tables" }],
        floor: floor(900, 700),
        calls: [{ tool: "nft", args: ["-j", "list", "chains"] }],
        cpuHour: {
          windowS: 600,
          scans: 10,
          agentCpuSPerHour: 30,
          nodeExporterCpuSPerHour: 40,
          nodeExporterSeries: 900,
          nodeExporterRssMb: 20,
        },
        serve: {
          paced: lat(2),
          saturated: lat(20),
          baseline: { ...lat(1), eventLoop: { maxMs: 3, intervals: 10, over5ms: 0 } },
          eventLoop: { maxMs: 4, intervals: 10, over5ms: 0 },
          scansDuringLoad: 5,
          rss: { rssMb: Array.from({ length: 1000 }, () => 80) },
        },
      },
    },
    ipvs: {
      10000: {
        scans: scans(3000, 2000),
        floorReads: [{ argv: ["cat", "/proc/net/ip_vs"], why: "servers" }],
        floor: floor(1000, 1000),
        reference: [{ wallMs: 500, cpuMs: 400 }],
        cpuHour: {
          windowS: 600,
          scans: 10,
          heapReleases: 4,
          agentCpuSPerHour: 50,
          nodeExporterCpuSPerHour: 40,
        },
        serve: { paced: lat(12), baseline: lat(1), eventLoop: { maxMs: 30 }, scansDuringLoad: 1 },
      },
    },
    fleet: {
      "agents-5000": {
        nodes: 5000,
        runs: [{ wallMs: 12000, cpuMs: 1, maxRssMb: 250 }],
        floor: [{ wallMs: 6000 }],
      },
      "prometheus-50000": {
        nodes: 50000,
        series: 7,
        runs: [{ wallMs: 11000, maxRssMb: 300 }],
        floorMs: [5500],
      },
    },
  };
}

const byId = (rows: TargetRow[]) => Object.fromEntries(rows.map((r) => [r.id, r]));

t.test("judge: every limit must hold; a missing figure is never a met", async (t) => {
  t.equal(judge([{ label: "a", value: 1, max: 1 }]), "met", "at most: the limit itself is met");
  t.equal(
    judge([{ label: "a", value: 1, max: 1, strict: true }]),
    "missed",
    "below: the limit itself is not",
  );
  t.equal(
    judge([
      { label: "a", value: 1, max: 2 },
      { label: "b", value: 3, max: 2 },
    ]),
    "missed",
  );
  t.equal(judge([{ label: "a", value: Number.NaN, max: 2 }]), "not measured");
  t.equal(judge([{ label: "a", value: 1, max: Number.NaN }]), "not measured", "no baseline, no verdict");
  t.equal(judge([]), "not measured");
  t.same(
    missedLimits([
      { label: "wall", value: 3, max: 2 },
      { label: "cpu", value: 1, max: 2 },
    ]),
    ["wall"],
  );
});

t.test("each target is a row with its baseline, ratio and verdict", async (t) => {
  const rows = byId(targetRows(results()));
  t.same(Object.keys(rows), ["a-nftables", "a-ipvs", "b", "c", "d-nftables", "d-ipvs", "e", "f", "g"]);

  t.equal(rows["a-nftables"]!.status, "met", "30 CPU-s/h: under 36 and under node_exporter's 40");
  t.equal(rows["a-nftables"]!.ratio, "0.75×");
  t.match(
    rows["a-nftables"]!.measured,
    /scaled ×6 \(host netns, load 1\.0→2\.0\)$/,
    "no heap releases recorded (an older run): none said",
  );
  t.match(rows["a-ipvs"]!.measured, /scaled ×6; 4 heap releases in it \(UML, load 1\.0→1\.0\)$/);
  t.equal(rows["a-ipvs"]!.status, "missed");
  t.same(rows["a-ipvs"]!.missed, ["≤ 36 CPU-s/h", "below node_exporter"]);

  // nftables scan: 1010 ms wall / 900 floor = 1.12×, CPU 810 / 700 = 1.16×: all four limits hold.
  t.equal(rows.b!.status, "met");
  t.equal(rows.b!.ratio, "1.12× (1.11–1.13) wall, 1.16× (1.14–1.17) CPU");
  // ipvs scan: 3010 / 1000 wall is 3×: missed, and the floor is shown against cat /proc/net/ip_vs.
  t.equal(rows.c!.status, "missed");
  t.same(rows.c!.missed, ["wall ≤ 1.2× floor", "CPU ≤ 1.2× floor"]);
  t.match(
    rows.c!.note,
    /floor \/ `cat \/proc\/net\/ip_vs` \(500 ms wall, 400 ms CPU\): 2\.00× wall, 2\.50× CPU/,
  );

  t.equal(rows["d-nftables"]!.status, "met");
  t.equal(rows["d-nftables"]!.ratio, "2.00×", "agent p99 over the bare server's");
  t.same(rows["d-ipvs"]!.missed, ["/metrics p99 < 10 ms", "/report p99 < 10 ms", "event-loop block ≤ 5 ms"]);

  // The bare server's own longest block is shown beside the agent's, where the run measured it.
  t.match(rows["d-nftables"]!.baseline, /p99 1\.0 ms, longest event-loop block 3\.0 ms$/);
  t.match(rows["d-ipvs"]!.baseline, /p99 1\.0 ms$/, "an older run without it: p99 only");

  t.equal(rows.e!.status, "met", "80 MB flat over 1,000 scans");
  t.equal(rows.e!.ratio, "4.00×", "against node_exporter's RSS");
  t.equal(rows.f!.status, "met");
  t.equal(rows.f!.ratio, "2.00×");
  t.equal(rows.g!.status, "missed");
  t.same(rows.g!.missed, ["< 10 s"]);
  // A collector that gave up is a miss however fast it gave up.
  const failed = results();
  failed.fleet["prometheus-50000"].runs = [{ wallMs: 900, maxRssMb: 100, exit: 5 } as never];
  const g = byId(targetRows(failed)).g!;
  t.same(g.missed, ["exit 0"]);
  t.match(g.measured, /1 run\(s\) exited 5/);
});

t.test("a run at a smaller N says so; a run that lacks a phase says not measured", async (t) => {
  const r = results() as Record<string, unknown>;
  const nft = (r.nft as Record<string, unknown>)[10000];
  r.nft = { 1000: nft };
  delete r.ipvs;
  const rows = byId(targetRows(r));
  t.equal(verdictText(rows.b!), "met at 1,000, not at the target's 10,000");
  t.equal(rows.c!.status, "not measured");
  t.equal(verdictText(rows.c!), "not measured");
  t.equal(rows["a-ipvs"]!.status, "not measured");
  const md = renderTargets(targetRows(r)).join("\n");
  t.match(md, /^\| # \| what \| N \| measured \| target \| baseline \(same run\) \| ratio \| result \|$/m);
  t.match(md, /\| c \| one full scan, ipvs mode \(UML\) \| — \| — \|/);
  t.match(md, /\*\*missed\*\* \(≤ 36 CPU-s\/h; below node_exporter\)|not measured/);
});

t.test("RSS: steady is the last tenth, growth the second half's slope per 1,000 scans", async (t) => {
  const y = Array.from({ length: 200 }, (_, i) => 80 + i * 0.01);
  const f = rssFigures(y);
  t.equal(f.scans, 200);
  t.ok(Math.abs(f.per1000 - 10) < 1e-9, "0.01 MB per scan is 10 MB per 1,000");
  t.ok(f.steady > 81.8 && f.steady < 82);
  const rows = byId(
    targetRows({
      nft: { 10000: { serve: { rss: { rssMb: y } }, cpuHour: { nodeExporterRssMb: 20 } } },
      loadavg: { nft: { start: [1], end: [1] } },
    }),
  );
  t.equal(rows.e!.status, "missed");
  t.same(rows.e!.missed, ["flat", "1,000 scans"], "too few scans is itself a miss of 'over 1,000 scans'");
  t.ok(Number.isNaN(rssFigures([1, 2, 3]).per1000), "too few samples give no slope");
});

t.test("the floors read every source once, the ipvs one starting from /proc/net/ip_vs", async (t) => {
  for (const f of [nftFloor(), ipvsFloor()]) {
    const argvs = f.map((r) => r.argv.join(" "));
    t.equal(new Set(argvs).size, argvs.length, "no read twice");
    t.ok(
      f.every((r) => r.why.length > 0),
      "each read says why",
    );
    t.notOk(argvs.includes("nft -j list table ip kube-proxy"), "never the full table");
    t.notOk(
      argvs.some((a) => /^nft .*list (tables|ruleset|chain )/.test(a)),
      "never a read that builds nft 1.0.6's full cache",
    );
  }
  t.same(ipvsFloor()[0]!.argv, ["cat", "/proc/net/ip_vs"]);
  t.ok(nftFloor().some((r) => r.argv.join(" ") === "nft -j list map ip kube-proxy service-ips"));
});

t.test("the Markdown puts the targets first and records the load average", async (t) => {
  const md = renderMarkdown(results());
  t.match(
    md,
    /Load average \(1 \/ 5 \/ 15 min\) at the start 1\.0 \/ 2\.0 \/ 3\.0, at the end 4\.0 \/ 5\.0 \/ 6\.0; nft phase/,
  );
  t.ok(md.indexOf("### Targets") < md.indexOf("### The new floor"));
  t.match(md, /\| `nft -j list chains` \| tables \| 900 \| 700 \|/);
  t.match(md, /\| agents \(static list, loopback\) \| 5,000 \| 12000 \|/);
});

t.test("row (a) not measured says why (node_exporter missing), and the rows after it stand", async (t) => {
  const r = results() as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  delete r.ipvs[10000].cpuHour;
  r.ipvs[10000].cpuHourError =
    "/usr/bin/prometheus-node-exporter not found (Debian package prometheus-node-exporter)";
  const rows = byId(targetRows(r));
  t.equal(rows["a-ipvs"]!.status, "not measured");
  t.equal(rows["a-ipvs"]!.measured, `— (${r.ipvs[10000].cpuHourError})`);
  t.not(rows["d-ipvs"]!.status, "not measured", "(d) is judged from its own figures");
});

t.test(
  "every row says its environment and load; a phase run above load 2 is a rerun, not a verdict",
  async (t) => {
    const r = results() as Record<string, unknown>;
    r.loadavg = {
      start: [1, 1, 1],
      nft: { start: [0.5, 1, 1], end: [1.9, 1, 1] },
      ipvs: { start: [1.5, 1, 1], end: [3.25, 1, 1] },
      fleet: { start: [0.2, 1, 1], end: [0.4, 1, 1] },
    };
    const rows = byId(targetRows(r));
    t.equal(rows.c!.status, "rerun");
    t.equal(rows["a-ipvs"]!.status, "rerun");
    t.equal(rows["d-ipvs"]!.status, "rerun");
    t.match(verdictText(rows.c!), /^\*\*rerun\*\*: measured at load 3\.3 > 2/);
    t.notMatch(verdictText(rows.c!), /met|missed/);
    t.equal(rows.b!.status, "met");
    t.match(rows.b!.measured, /\(host netns, load 0\.5→1\.9\)$/);
    t.match(rows.c!.measured, /\(UML, load 1\.5→3\.3\)$/);
    t.match(rows.f!.measured, /\(host loopback, load 0\.2→0\.4\)$/);
    // A run that did not record its load cannot say it was quiet.
    delete r.loadavg;
    t.equal(byId(targetRows(r)).b!.status, "rerun");
  },
);

// In UML Node's own start is seconds of CPU: the ipvs one-shot is also judged with it taken out
// (≤ 2× the floor), from `node` on an empty module timed in the same boot.
t.test("the ipvs scan row, with Node's start taken out", async (t) => {
  const withStart = (cpuMs: number) => {
    const r = results();
    (r.ipvs as Record<number, Record<string, unknown>>)[10000]!.nodeStart = [{ cpuMs }, { cpuMs }];
    return byId(targetRows(r)).c!;
  };
  // scans 2000 and 2020 ms CPU, floor 1000: 500 ms of start leaves 1.51×, within 2×.
  const c = withStart(500);
  t.notOk(c.missed.includes("CPU, Node's start taken out, ≤ 2× floor"));
  t.match(
    c.note,
    /Node's start \(`node` on an empty module, same boot\) 500 ms CPU: 1\.51× .*CPU with it taken out/,
  );
  t.match(c.target, /CPU with Node's start taken out ≤ 2× the floor$/);
  // 0 ms of start leaves 2.01×: missed.
  t.ok(withStart(0).missed.includes("CPU, Node's start taken out, ≤ 2× floor"));
  // Without the timing (an older run) the limit is not invented.
  t.notMatch(byId(targetRows(results())).c!.target, /Node's start/);
});
