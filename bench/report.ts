// Renders bench/results/latest.json as the Markdown the README carries: first the agent-cost targets,
// one row each with its baseline measured in the same run (bench/lib/targets.ts), then the details
// behind them. Every figure is a median over runs with its spread (min–max) in brackets.
import { fmt, percentiles, summarize, type Summary } from "./lib/stats.js";
import { renderTargets, targetRows } from "./lib/targets.js";

/* eslint-disable @typescript-eslint/no-explicit-any -- results are the JSON this benchmark wrote */
type Json = any;

const ms = (xs: readonly number[] | undefined) => summarize(xs ?? []);
const pick = (rows: Json[] | undefined, k: string) => (rows ?? []).map((r) => Number(r[k]));
const mb = (s: Summary) => fmt(s, 0);

/** Each read of the floor, its median wall and CPU over the floor runs. */
function floorRows(block: Json): string[] {
  const n = Object.keys(block ?? {}).find((k) => /^\d+$/.test(k));
  const r = n === undefined ? undefined : block[n];
  if (!r?.floor?.length) return ["(not measured)"];
  const rows = [`| read | why | wall ms | CPU ms |`, `|---|---|---|---|`];
  (r.floorReads as { argv: string[]; why: string }[]).forEach((read, i) => {
    const per = (r.floor as Json[]).map((f) => f.reads?.[i]);
    rows.push(
      `| \`${read.argv.join(" ")}\` | ${read.why} | ${fmt(ms(pick(per, "wallMs")), 0)} | ${fmt(ms(pick(per, "cpuMs")), 0)} |`,
    );
  });
  rows.push(
    `| **sum** | | ${fmt(ms(pick(r.floor, "wallMs")), 0)} | ${fmt(ms(pick(r.floor, "cpuMs")), 0)} |`,
    ``,
    `The scan itself: ${fmt(ms(pick(r.scans, "wallMs")), 0)} ms wall, ${fmt(ms(pick(r.scans, "cpuMs")), 0)} ms CPU (${fmt(ms(pick(r.scans, "selfCpuMs")), 0)} the agent, ${fmt(ms(pick(r.scans, "toolsCpuMs")), 0)} its tools), ${mb(ms(pick(r.scans, "maxRssMb")))} MB peak RSS; its calls: ${(r.calls ?? []).map((c: Json) => `\`${c.tool} ${c.args.join(" ")}\``).join(", ")}.`,
  );
  return rows;
}

function serveRows(block: Json, env: string): string[] {
  const n = Object.keys(block ?? {}).find((k) => /^\d+$/.test(k));
  const s = n === undefined ? undefined : block[n]?.serve;
  if (!s) return [];
  const p = (phase: Json, path: string) => {
    const q = percentiles(phase?.latencyMs?.[path] ?? []);
    return `${q.p50.toFixed(1)} / ${q.p99.toFixed(1)}`;
  };
  return [
    `| ${env} | ${Number(n).toLocaleString("en-US")} | ${p(s.paced, "/metrics")} | ${p(s.paced, "/report")} | ${p(s.baseline, "/metrics")} | ${p(s.baseline, "/report")} | ${p(s.saturated, "/metrics")} | ${p(s.saturated, "/report")} | ${s.saturated?.rps?.toFixed(0)} | ${Number(s.eventLoop?.maxMs).toFixed(1)} (${s.eventLoop?.over5ms}/${s.eventLoop?.intervals}) | ${s.scansDuringLoad} (last ${Number(s.lastScanS).toFixed(2)} s) | ${Number(s.agentMaxRssMb).toFixed(0)} |`,
  ];
}

const la = (v: Json) => (Array.isArray(v) ? v.map((x: number) => x.toFixed(1)).join(" / ") : "—");

function fleetRows(f: Json): string[] {
  const rows: string[] = [];
  for (const [k, v] of Object.entries<Json>(f ?? {})) {
    if (!v?.runs) continue;
    const wall = ms(pick(v.runs, "wallMs"));
    const rss = ms(pick(v.runs, "maxRssMb"));
    const cpu = ms(pick(v.runs, "cpuMs"));
    const source = k.startsWith("agents") ? "agents (static list, loopback)" : "Prometheus (backfilled TSDB)";
    const conc = k.startsWith("agents")
      ? `${v.concurrency} (${v.timeoutMs / 1000} s per call)`
      : "4 instant PromQL queries at a time, one deadline (the floor: all at once)";
    const outcomes = Object.entries<number>(v.outcomes ?? {})
      .map(([o, c]) => `${o} ${c}`)
      .join(", ");
    const floor = v.floor ? ms(pick(v.floor, "wallMs")) : ms(v.floorMs);
    rows.push(
      `| ${source} | ${Number(v.nodes).toLocaleString("en-US")} | ${fmt(wall, 0)} | ${fmt(cpu, 0)} | ${mb(rss)} | ${fmt(floor, 0)} | ${conc} | ${outcomes}${v.series ? `; ${v.series} series` : ""} |`,
    );
    // Before/after in one run: the older collector (whole /report) against the old floor.
    if (v.oldRuns?.length) {
      const old = (f: string) => ms(pick(v.oldRuns, f));
      const oldOutcomes = Object.entries<number>(v.oldRuns.at(-1)?.outcomes ?? {})
        .map(([o, c]) => `${o} ${c}`)
        .join(", ");
      rows.push(
        `| ${source}, old collector (${v.oldDist}) | ${Number(v.nodes).toLocaleString("en-US")} | ${fmt(old("wallMs"), 0)} | ${fmt(old("cpuMs"), 0)} | ${mb(old("maxRssMb"))} | ${fmt(ms(pick(v.reportFloor, "wallMs")), 0)} (every /report) | ${conc} | ${oldOutcomes} |`,
      );
    }
  }
  return rows;
}

export function renderMarkdown(r: Json): string {
  const m = r.machine ?? {};
  const l = r.loadavg ?? {};
  const plan = r.plan ?? {};
  const out: string[] = [
    `## Benchmarks`,
    ``,
    `Run ${String(m.date).slice(0, 16).replace("T", " ")} UTC on ${m.nproc} CPUs (${m.cpuModel}), ${m.memoryGb} GB, ${m.kernel}, Node ${m.node}` +
      (r.totalS ? `; the whole run took ${(r.totalS / 60).toFixed(0)} min.` : "."),
    `Load average (1 / 5 / 15 min) at the start ${la(l.start)}, at the end ${la(l.end)}` +
      ["nft", "ipvs", "fleet"]
        .filter((k) => l[k])
        .map((k) => `; ${k} phase ${la(l[k].start)} → ${la(l[k].end)}`)
        .join("") +
      ` (the machine is shared: wall times at a load above its ${m.nproc} CPUs are inflated, CPU less so).`,
    `Rerun: \`scripts/bench.sh\` (${r.quick ? "this run: `scripts/bench.sh --quick`, " : ""}${plan.services?.toLocaleString?.("en-US")} Services × ${r.endpointsPerService ?? 10} endpoints,`,
    `${plan.fleetNodes} agents, ${plan.promNodes} Prometheus nodes, ${plan.rssScans} RSS scans, \`serve\` windows of ${plan.cpuHourS} s and ${plan.loadS} s; raw results \`bench/results/*.json\`).`,
    `Figures are medians over ${plan.reps} runs with min–max in brackets; every ratio is against a baseline measured in the same run.`,
    ``,
    `### Targets`,
    ``,
    ...renderTargets(targetRows(r)),
    ``,
    `### The new floor, read by read`,
    ``,
    `nftables mode (network namespace on the host kernel, kube-proxy 1.34's \`table ip kube-proxy\`):`,
    ``,
    ...floorRows(r.nft),
    ``,
    `ipvs mode (User-Mode Linux, one CPU: real IPVS servers, kube-ipvs0, ipsets, iptables-legacy chains):`,
    ``,
    ...floorRows(r.ipvs),
    ``,
    `### /metrics and /report while scans run back to back`,
    ``,
    `\`serve --scan-interval-ms 500\`. Paced: 4 clients at 200 requests/s in all, against the agent and then against a`,
    `bare node:http server of the same bytes; saturated: 8 clients back to back. Latency ms p50 / p99. Event loop:`,
    `the longest delay of the serving thread (monitorEventLoopDelay, 250 ms intervals over 5 ms / all).`,
    ``,
    `| where | Services | paced /metrics | paced /report | bare /metrics | bare /report | saturated /metrics | saturated /report | saturated req/s | event-loop max ms | scans during load | agent max RSS MB |`,
    `|---|---|---|---|---|---|---|---|---|---|---|---|`,
    ...serveRows(r.nft, "netns"),
    ...serveRows(r.ipvs, "UML"),
    ``,
    `### Fleet: the collector`,
    ``,
    `Stand-in agents on loopback answer real NodeReports recorded by the node benchmark (${(r.fleet?.reportBytes ?? []).map((b: number) => `${(b / 1024).toFixed(0)} KB`).join(", ")});`,
    `5 % answer after 0.2–2 s, 2 % are down (connection refused), 1 % answer garbage, 1 % HTTP 500,`,
    `0.2 % never answer. The Prometheus source reads a real Prometheus 2.42 whose TSDB was backfilled`,
    `with \`promtool tsdb create-blocks-from openmetrics\` from a real agent's /metrics, the queried families only.`,
    ``,
    `| source | nodes | wall ms | CPU ms | peak RSS MB | floor wall ms | concurrency | outcomes |`,
    `|---|---|---|---|---|---|---|---|`,
    ...fleetRows(r.fleet),
    ``,
  ];
  return out.join("\n");
}

// `node dist/bench/report.js [results.json]`: re-render latest.md from a results file.
if (process.argv[1]?.endsWith("report.js")) {
  const { readFileSync, writeFileSync } = await import("node:fs");
  const dir = new URL("../../bench/results/", import.meta.url);
  const file = process.argv[2] ?? new URL("latest.json", dir).pathname;
  writeFileSync(new URL("latest.md", dir), renderMarkdown(JSON.parse(readFileSync(file, "utf8"))));
}
