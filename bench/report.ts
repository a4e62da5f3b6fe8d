// Renders bench/results/latest.json as the Markdown table the README carries. Every figure is a
// median over runs with its spread (min–max) in brackets, and the headline figures are ratios
// against a baseline measured in the same run on the same kernel state.
import { fmt, percentiles, ratio, slope, summarize, type Summary } from "./lib/stats.js";

/* eslint-disable @typescript-eslint/no-explicit-any -- results are the JSON this benchmark wrote */
type Json = any;

const ms = (xs: readonly number[] | undefined) => summarize(xs ?? []);
const pick = (rows: Json[] | undefined, k: string) => (rows ?? []).map((r) => Number(r[k]));
const x = (s: Summary) => fmt(s, 2, "×");
const msf = (s: Summary) => fmt(s, 0);
const mb = (s: Summary) => fmt(s, 0);

function nodeRows(block: Json, kind: "ipvs" | "nft"): string[] {
  const rows: string[] = [];
  for (const n of Object.keys(block ?? {}).filter((k) => /^\d+$/.test(k))) {
    const r = block[n];
    if (!r?.scans) continue;
    const scanWall = ms(pick(r.scans, "wallMs"));
    const scanCpu = ms(pick(r.scans, "cpuMs"));
    const floorWall = ms(pick(r.floor, "wallMs"));
    const floorCpu = ms(pick(r.floor, "cpuMs"));
    const rss = ms(pick(r.scans, "maxRssMb"));
    const cells = [
      Number(n).toLocaleString("en-US"),
      msf(scanWall),
      msf(floorWall),
      x(ratio(scanWall, floorWall)),
      msf(scanCpu),
      msf(floorCpu),
      x(ratio(scanCpu, floorCpu)),
      mb(rss),
    ];
    if (kind === "ipvs") {
      const ne = r.nodeExporter;
      const neWall = ms(pick(ne?.scrapes, "wallMs"));
      const ipvsadm = ms(pick(r.baselines?.["ipvsadm -L -n"], "wallMs"));
      cells.push(
        msf(neWall),
        x(ratio(scanWall, neWall)),
        `${r.serve?.metricsSeries ?? "—"} / ${ne?.scrapes?.[0]?.series ?? "—"}`,
        ne ? mb(summarize([ne.peakRssMb])) : "—",
        msf(ipvsadm),
      );
    } else {
      const j = r.baselines?.["nft -j list table ip kube-proxy"];
      const t = r.baselines?.["nft list table ip kube-proxy"];
      const jWall = ms(pick(j, "wallMs"));
      cells.push(
        msf(jWall),
        x(ratio(scanWall, jWall)),
        mb(ms(pick(j, "maxRssMb"))),
        msf(ms(pick(t, "wallMs"))),
        mb(ms(pick(t, "maxRssMb"))),
      );
    }
    rows.push(`| ${cells.join(" | ")} |`);
  }
  return rows;
}

function serveRows(block: Json, env: string): string[] {
  const rows: string[] = [];
  for (const n of Object.keys(block ?? {}).filter((k) => /^\d+$/.test(k))) {
    const s = block[n]?.serve;
    if (!s) continue;
    const p = (phase: Json, path: string) => {
      const q = percentiles(phase?.latencyMs?.[path] ?? []);
      return `${q.p50.toFixed(1)} / ${q.p99.toFixed(1)}`;
    };
    rows.push(
      `| ${env} | ${Number(n).toLocaleString("en-US")} | ${p(s.paced, "/metrics")} | ${p(s.paced, "/report")} | ${s.paced?.rps?.toFixed(0)} | ${p(s.saturated, "/metrics")} | ${p(s.saturated, "/report")} | ${s.saturated?.rps?.toFixed(0)} | ${s.scansDuringLoad} (last ${Number(s.lastScanS).toFixed(2)} s) | ${Number(s.agentMaxRssMb).toFixed(0)} | ${((s.saturated?.bytes?.["/report"] ?? 0) / 1024).toFixed(0)} |`,
    );
  }
  return rows;
}

function rssRows(block: Json, env: string): string[] {
  const rows: string[] = [];
  for (const n of Object.keys(block ?? {}).filter((k) => /^\d+$/.test(k))) {
    const r = block[n]?.rss;
    if (!r?.rssMb?.length) continue;
    const y: number[] = r.rssMb;
    const first = summarize(y.slice(0, 10));
    const last = summarize(y.slice(-10));
    const heapLast = summarize((r.heapMb as number[]).slice(-10));
    rows.push(
      `| ${env} | ${Number(n).toLocaleString("en-US")} | ${y.length} | ${mb(first)} | ${mb(last)} | ${Math.max(...y).toFixed(0)} | ${y.length >= 100 ? slope(y.slice(Math.floor(y.length / 2))).toFixed(2) : "— (too few)"} | ${mb(heapLast)} |`,
    );
  }
  return rows;
}

function fleetRows(f: Json): string[] {
  const rows: string[] = [];
  for (const [k, v] of Object.entries<Json>(f ?? {})) {
    if (!v?.runs) continue;
    const wall = ms(pick(v.runs, "wallMs"));
    const rss = ms(pick(v.runs, "maxRssMb"));
    const cpu = ms(pick(v.runs, "cpuMs"));
    const source = k.startsWith("agents") ? "agents (static list, loopback)" : "Prometheus (backfilled TSDB)";
    const conc = k.startsWith("agents")
      ? `${v.concurrency} (timeout ${v.timeoutMs / 1000} s, 1 retry)`
      : "11 instant PromQL queries";
    const outcomes = Object.entries<number>(v.outcomes ?? {})
      .map(([o, c]) => `${o} ${c}`)
      .join(", ");
    rows.push(
      `| ${source} | ${Number(v.nodes).toLocaleString("en-US")} | ${fmt(wall, 0)} | ${fmt(cpu, 0)} | ${mb(rss)} | ${conc} | ${outcomes}${v.series ? `; ${v.series} series` : ""} |`,
    );
  }
  return rows;
}

export function renderMarkdown(r: Json): string {
  const m = r.machine ?? {};
  const out: string[] = [];
  out.push(
    `## Benchmarks`,
    ``,
    `Run ${String(m.date).slice(0, 16).replace("T", " ")} UTC on ${m.nproc} CPUs (${m.cpuModel}), ${m.memoryGb} GB, ${m.kernel}, Node ${m.node}` +
      (r.totalS ? `; the whole run took ${(r.totalS / 60).toFixed(0)} min.` : "."),
    `Rerun: \`scripts/bench.sh\` (raw results: \`bench/results/*.json\`). Each figure is the median over runs with`,
    `min–max in brackets; ratios are against a baseline measured in the same run on the same kernel state.`,
    `${r.endpointsPerService ?? 10} endpoints per Service. Repetitions: ${JSON.stringify(r.plan?.reps ?? {})} scans per N (fewer at 10,000).`,
    ``,
    `### ipvs mode, User-Mode Linux (kernel 6.1, one CPU)`,
    ``,
    `Real IPVS virtual and real servers, every ClusterIP on a real kube-ipvs0, the KUBE-* ipsets with`,
    `their entries, kube-proxy's and kubelet's iptables-legacy chains. Floor = every file and tool call`,
    `the scan made, replayed once in sequence with the output discarded.`,
    ``,
    `| Services | scan wall ms | floor wall ms | scan/floor | scan CPU ms | floor CPU ms | CPU scan/floor | agent peak RSS MB | node_exporter ipvs scrape ms | scan/node_exporter | series proxyscope / node_exporter | node_exporter RSS MB | ipvsadm -L -n ms |`,
    `|---|---|---|---|---|---|---|---|---|---|---|---|---|`,
    ...nodeRows(r.ipvs, "ipvs"),
    ``,
    `### nftables mode, network namespace on the host kernel`,
    ``,
    `kube-proxy's \`table ip kube-proxy\` (1.34 layout: a service chain per Service, an endpoint chain per`,
    `endpoint, cluster-ips, service-ips, service-nodeports) plus kubelet's chains; the baseline is what a`,
    `user would run instead: \`nft -j list table ip kube-proxy\`.`,
    ``,
    `| Services | scan wall ms | floor wall ms | scan/floor | scan CPU ms | floor CPU ms | CPU scan/floor | agent peak RSS MB | nft -j list table ms | scan/that | its RSS MB | nft list table (text) ms | its RSS MB |`,
    `|---|---|---|---|---|---|---|---|---|---|---|---|---|`,
    ...nodeRows(r.nft, "nft"),
    ``,
    ...(r.nftAfterFix
      ? [
          `After the two nftables fixes of this issue (no \`nft list tables\`; the package database read once),`,
          `measured after the run above on the same machine, same state (the \`nft list table\` baselines are the run's):`,
          ``,
          `| Services | scan wall ms | floor wall ms | scan/floor | scan CPU ms | floor CPU ms | CPU scan/floor | agent peak RSS MB | nft -j list table ms | scan/that | its RSS MB | nft list table (text) ms | its RSS MB |`,
          `|---|---|---|---|---|---|---|---|---|---|---|---|---|`,
          ...nodeRows(r.nftAfterFix, "nft"),
          ``,
        ]
      : []),
    `### /metrics and /report from the last scan, while scans run back to back`,
    ``,
    `\`proxyscope-agent serve --scan-interval-s 0.5\` (each scan starts as soon as the last one ends).`,
    `Paced: 4 clients at 200 requests/s in all; saturated: 8 clients back to back. Latency ms p50 / p99`,
    `over every request of one run (the load generator shares the machine — in UML, its one CPU).`,
    ``,
    `| where | Services | paced /metrics | paced /report | paced req/s | saturated /metrics | saturated /report | saturated req/s | scans during load | agent max RSS MB | /report KB |`,
    `|---|---|---|---|---|---|---|---|---|---|---|`,
    ...serveRows(r.nft, "netns"),
    ...serveRows(r.nftAfterFix, "netns, after the fixes"),
    ...serveRows(r.ipvs, "UML"),
    ``,
    `### RSS over consecutive scans (in one process, as the serve loop runs them)`,
    ``,
    `| where | Services | scans | RSS MB, first 10 | RSS MB, last 10 | max | slope MB/100 scans (2nd half) | heap MB, last 10 |`,
    `|---|---|---|---|---|---|---|---|`,
    ...rssRows(r.nft, "netns"),
    ...rssRows(r.nftAfterFix, "netns, after the fixes"),
    ...rssRows(r.ipvs, "UML"),
    ``,
    `### Fleet: the collector`,
    ``,
    `Stand-in agents on loopback answer real NodeReports recorded above (${(r.fleet?.reportBytes ?? []).map((b: number) => `${(b / 1024).toFixed(0)} KB`).join(", ")});`,
    `5 % answer after 0.2–2 s, 2 % are down (connection refused), 1 % answer garbage, 1 % HTTP 500,`,
    `0.2 % never answer. The Prometheus source reads the same fleet from a real Prometheus 2.42 whose`,
    `TSDB was backfilled with \`promtool tsdb create-blocks-from openmetrics\` from a real agent's /metrics.`,
    ``,
    `| source | nodes | wall ms | CPU ms | peak RSS MB | concurrency | outcomes |`,
    `|---|---|---|---|---|---|---|`,
    ...fleetRows(r.fleet),
    ``,
    ...(r.fleetAfterFix
      ? [
          `After the report fix of this issue (the 10,000-Service report cut from ${((r.fleet?.reportBytes ?? [])[2] / 1024).toFixed(0)} KB to ${((r.fleetAfterFix.reportBytes ?? [])[2] / 1024).toFixed(0)} KB), the same fleet again:`,
          ``,
          `| source | nodes | wall ms | CPU ms | peak RSS MB | concurrency | outcomes |`,
          `|---|---|---|---|---|---|---|`,
          ...fleetRows(r.fleetAfterFix),
          ``,
        ]
      : []),
  );
  return out.join("\n");
}

// `node dist/bench/report.js [results.json]`: re-render latest.md from a results file.
if (process.argv[1]?.endsWith("report.js")) {
  const { readFileSync, writeFileSync } = await import("node:fs");
  const dir = new URL("../../bench/results/", import.meta.url);
  const file = process.argv[2] ?? new URL("latest.json", dir).pathname;
  writeFileSync(new URL("latest.md", dir), renderMarkdown(JSON.parse(readFileSync(file, "utf8"))));
}
