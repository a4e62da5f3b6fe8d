// The Prometheus source against a real Prometheus (Debian's) that scraped real `proxyscope-agent serve`
// processes on loopback; the API server STAND-IN lists one node more than Prometheus has series for.
import t from "tap";
import { EXIT } from "../../common/exit-codes.js";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FleetReport } from "../../collector/report/schema.js";
import { gatherBurnDown } from "../../collector/sources/prometheus.js";
import { freePort, PROMETHEUS, startPrometheus } from "../helpers/prometheus.js";
import { agentPod, collector, fleetFlags, node, startApiServer, startRealAgent } from "./collector-fleet.js";
import { LOST_ADDRESS, PARITY_NFT_ANSWERS, snapshotOfRecording } from "../helpers/parity-snapshot.js";

if (!existsSync(PROMETHEUS)) {
  t.plan(0, "Debian prometheus is not installed");
  process.exit(0);
}

const port = await freePort();
const fleet = [
  { name: "prom-ipvs", ip: "127.0.0.41", kernel: "6.8.0-1015-aws", mode: "ipvs" as const },
  { name: "prom-old", ip: "127.0.0.42", kernel: "4.18.0-553.el8_10.x86_64", mode: "ipvs" as const },
  { name: "prom-nft", ip: "127.0.0.43", kernel: "6.1.0-26-amd64", mode: "nftables" as const },
];
// Parity: prom-parity switched with a snapshot and an nft that answers the parity probe's reads from the
// recorded 1.34 ruleset (and nothing else: its nftables probe fails, named); prom-nft has a snapshot
// but no nft at all, so its parity is not read and its parity metrics are absent.
const parityDir = mkdtempSync(join(tmpdir(), "proxyscope-prom-parity-"));
t.teardown(() => rmSync(parityDir, { recursive: true, force: true }));
const nftScript = [
  "#!/bin/sh",
  'case "$*" in',
  ...Object.entries(PARITY_NFT_ANSWERS).map(([args, file]) => `  '${args}') exec /bin/cat '${file}' ;;`),
  '  *) echo "unexpected arguments: $*" >&2; exit 99 ;;',
  "esac",
].join("\n");
writeFileSync(join(parityDir, "nft"), `${nftScript}\n`);
chmodSync(join(parityDir, "nft"), 0o755);
const snapshotFlags = (name: string) => {
  const path = join(parityDir, `${name}-snapshot.json`);
  writeFileSync(path, JSON.stringify(snapshotOfRecording(name, Math.floor(Date.now() / 1000))));
  return ["--parity-snapshot", path];
};
fleet.push({ name: "prom-parity", ip: "127.0.0.44", kernel: "6.1.0-26-amd64", mode: "nftables" as const });
const agents = await Promise.all(
  fleet.map((n) =>
    startRealAgent(
      n.name,
      n.ip,
      port,
      n.kernel,
      n.mode,
      n.name === "prom-parity"
        ? { toolDir: parityDir, args: snapshotFlags(n.name) }
        : n.name === "prom-nft"
          ? { args: snapshotFlags(n.name) }
          : {},
    ),
  ),
);
t.teardown(() => Promise.all(agents.map((a) => a.stop())));

// The shipped scrape config sets `node` by relabeling from __meta_kubernetes_pod_node_name; static
// targets carry the same label here.
const prom = await startPrometheus({
  scrapeIntervalS: 1,
  jobs: fleet.map((n) => ({
    job: `agent-${n.name}`,
    targets: [`${n.ip}:${port}`],
    labels: { node: n.name },
  })),
});
t.teardown(() => prom.stop());
// Every node's phase already 2 s ago: the burn-down's last point is evaluated at the whole second
// before its query is sent, and the collector sends it within a fraction of a second of its start.
await prom.waitFor(
  "count(proxyscope_node_phase offset 2s == 1)",
  (s) => s[0]?.value === fleet.length,
  300_000,
);

const api = await startApiServer({
  nodes: [
    ...fleet.map((n) => node({ name: n.name, kernel: n.kernel, osImage: "Ubuntu 24.04.1 LTS" })),
    node({ name: "prom-silent", kernel: "6.8.0-1015-aws", osImage: "Ubuntu 24.04.1 LTS" }),
  ],
  pods: fleet.map((n, i) => agentPod(n.name, n.ip, i)),
});
t.teardown(() => api.stop());

const viaPromArgs = (output: string) => [
  "report",
  "--source",
  "prometheus",
  "--prometheus-url",
  prom.url,
  "--kubeconfig",
  api.kubeconfig,
  "--output",
  output,
];
const viaProm = await collector(viaPromArgs("json"));
const viaAgents = await collector(["report", ...fleetFlags(api.kubeconfig, port), "--output", "json"]);

t.test("the same fleet through Prometheus and through the agents agrees on phase and verdict", async (t) => {
  t.equal(viaProm.code, 0, viaProm.stderr);
  t.equal(viaAgents.code, 0, viaAgents.stderr);
  const p = FleetReport.parse(JSON.parse(viaProm.stdout));
  const a = FleetReport.parse(JSON.parse(viaAgents.stdout));
  t.equal(p.source, "prometheus");
  for (const n of fleet) {
    const pn = p.nodes.find((x) => x.node === n.name)!;
    const an = a.nodes.find((x) => x.node === n.name)!;
    t.equal(pn.outcome, "ok", n.name);
    t.equal(an.outcome, "ok", n.name);
    t.equal(pn.phase, an.phase, `${n.name} phase`);
    t.equal(pn.verdict, an.verdict, `${n.name} verdict`);
    t.same(pn.findings.map((f) => f.id).sort(), an.findings.map((f) => f.id).sort(), `${n.name} finding ids`);
    t.equal(pn.kernelNftables?.capable, n.kernel.startsWith("4.") ? false : true);
    t.ok(pn.agentVersion, "build_info version");
    t.ok(pn.scannedAt, "last scan timestamp");
  }
  t.equal(p.nodes.find((x) => x.node === "prom-old")?.verdict, "blocked");
});

t.test("a node the API lists but Prometheus has no series for is no-data, never dropped", async (t) => {
  const p = FleetReport.parse(JSON.parse(viaProm.stdout));
  const silent = p.nodes.find((x) => x.node === "prom-silent");
  t.equal(silent?.outcome, "no-data");
  t.equal(p.partial, true);
  t.equal(p.nodes.length, fleet.length + 1);
  const a = FleetReport.parse(JSON.parse(viaAgents.stdout));
  t.equal(a.nodes.find((x) => x.node === "prom-silent")?.outcome, "no-agent");
});

t.test("the burn-down: nodes by phase over time, from a range query", async (t) => {
  const p = FleetReport.parse(JSON.parse(viaProm.stdout));
  t.equal(p.historyError, undefined, "the range query answered");
  const hist = p.history ?? [];
  t.ok(hist.length >= 1, `points (${hist.length})`);
  // Prometheus's own count of the fleet's phase series at the last step agrees with the report's now.
  t.same(hist.at(-1)?.byPhase, { ipvs: 2, nftables: 2 }, "the last point: two nodes on ipvs, two off");
  t.same(
    hist.map((x) => x.at),
    [...hist.map((x) => x.at)].sort(),
    "oldest first",
  );
  // The same query over the last two minutes every second: one point per step that had scrapes.
  const fine = await gatherBurnDown(
    {
      url: prom.url,
      nodeLabel: "node",
      timeoutMs: 30_000,
      maxBytes: 1 << 20,
      staleAfterS: 600,
      now: () => Date.now() / 1000,
    },
    120,
    1,
  );
  t.ok(fine.ok, fine.ok ? "" : fine.error);
  if (fine.ok) {
    t.ok(fine.value.length >= 2, `several points (${fine.value.length})`);
    for (const pt of fine.value)
      t.ok(Object.values(pt.byPhase).reduce((a, b) => a + b, 0) <= fleet.length, `${pt.at}: no node twice`);
  }
  const page = await collector(viaPromArgs("html"));
  t.match(page.stdout, /<section class="span12" id="burn-down"><h2>Burn-down \(from Prometheus\)<\/h2>/);
  t.match(page.stdout, /nodes in ipvs mode: \d+ → 2/);
});

t.test(
  "parity through Prometheus: the agents' counts; absent metrics are not reported, never zero",
  async (t) => {
    const p = FleetReport.parse(JSON.parse(viaProm.stdout));
    const a = FleetReport.parse(JSON.parse(viaAgents.stdout));
    const pp = p.nodes.find((x) => x.node === "prom-parity")!;
    const ap = a.nodes.find((x) => x.node === "prom-parity")!;
    t.equal(ap.parity?.state, "compared", "the agent compared");
    t.equal(ap.parity?.counts?.missingAfter, 1, "one Service IP lost");
    t.ok(
      ap.parity?.lost.some((l) => l.startsWith(`${LOST_ADDRESS}:80`)),
      "named by the agent's /report",
    );
    t.equal(pp.parity?.state, "compared", "Prometheus: compared");
    t.same(pp.parity?.counts, ap.parity?.counts, "Prometheus: the same counts as the agent's /report");
    t.ok(pp.parity?.snapshotAgeSeconds !== null && pp.parity!.snapshotAgeSeconds! >= 0, "snapshot age known");
    t.same(pp.parity?.lost, [], "Prometheus carries no addresses");
    // prom-nft: parity not read on the node, so no parity series at all.
    t.equal(a.nodes.find((x) => x.node === "prom-nft")?.parity, null, "agents: parity not read");
    t.equal(p.nodes.find((x) => x.node === "prom-nft")?.parity, null, "Prometheus: not reported, not zero");
    for (const n of ["prom-ipvs", "prom-old"])
      t.equal(p.nodes.find((x) => x.node === n)?.parity?.state, "off", n);
    t.match(p.summary.parity, {
      byState: { compared: 1, unknown: 1, off: 2 },
      nodesWithLost: ["prom-parity"],
      missingAfter: 1,
    });
    const step = p.plan.find((x) => x.id === "canary-then-pools");
    t.match(step?.detail, /Services lost in the switch on prom-parity/);
    t.match(step?.detail, /parity not shown on switched node\(s\) prom-nft/);
    const page = await collector(viaPromArgs("html"));
    const section = /<section class="span12" id="parity">[\s\S]*?<\/section>/.exec(page.stdout)?.[0] ?? "";
    t.match(
      section,
      /<tr data-node="prom-parity"><td>prom-parity<\/td><td><span class="chip c-bad">compared<\/span>/,
    );
    t.match(section, /not carried by this source \(read the node's \/parity\)/);
    t.match(
      section,
      /<tr data-node="prom-nft"><td>prom-nft<\/td><td><span class="chip c-none">not reported<\/span>/,
    );
  },
);

t.test("Prometheus unreachable: no report, its own exit code", async (t) => {
  const closed = await freePort();
  const r = await collector([
    "report",
    "--source",
    "prometheus",
    "--prometheus-url",
    `http://127.0.0.1:${closed}`,
    "--kubeconfig",
    api.kubeconfig,
  ]);
  t.equal(r.code, EXIT.noReport);
  t.match(r.stderr, /Prometheus at http:\/\/127\.0\.0\.1:\d+/);
});

// Prometheus at fleet scale: one query answers for the whole fleet, and at 50,000 nodes Prometheus needs seconds of
// CPU for it; the per-call --timeout-ms (one agent's answer) failed every such query, so the source
// gave no report at all. The same real Prometheus, its answers relayed unchanged but each held past
// the per-call deadline: the queries share the gather's deadline, and every node is still read.
t.test(
  "queries slower than the per-call deadline still answer: they share the gather's deadline",
  async (t) => {
    const callMs = 5000;
    const holdMs = callMs + 1000;
    const seen: string[] = [];
    const relay = http.createServer((req, res) => {
      seen.push(req.url!);
      void (async () => {
        const upstream = await fetch(`${prom.url}${req.url}`);
        const body = Buffer.from(await upstream.arrayBuffer());
        setTimeout(() => {
          res.writeHead(upstream.status, { "content-type": upstream.headers.get("content-type") ?? "" });
          res.end(body);
        }, holdMs);
      })().catch(() => res.destroy());
    });
    await new Promise<void>((r) => relay.listen(0, "127.0.0.1", () => r()));
    t.teardown(() => new Promise<void>((r) => relay.close(() => r())));
    const relayUrl = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;
    const r = await collector([
      "report",
      "--source",
      "prometheus",
      "--prometheus-url",
      relayUrl,
      "--kubeconfig",
      api.kubeconfig,
      "--timeout-ms",
      String(callMs),
      "--output",
      "json",
    ]);
    t.equal(r.code, 0, r.stderr);
    const p = FleetReport.parse(JSON.parse(r.stdout));
    for (const n of fleet) t.equal(p.nodes.find((x) => x.node === n.name)?.outcome, "ok", n.name);
    t.same(
      p.nodes.map((n) => [n.node, n.phase]),
      FleetReport.parse(JSON.parse(viaProm.stdout)).nodes.map((n) => [n.node, n.phase]),
      "the same phases as unrelayed",
    );
    t.equal(p.historyError, undefined, "the burn-down answered too");
    // Prometheus is told the time left, so it stops evaluating when the collector stops waiting.
    for (const u of seen) t.match(new URL(u, relayUrl).searchParams.get("timeout"), /^\d+\.\d{3}$/, u);
  },
);
