import t from "tap";
import {
  chunks,
  ipsetEntries,
  ipvsadmRestore,
  kubeIpvs0Batch,
  NFT_BASE,
  nftDeclarations,
  nftRulesAndElements,
  services,
} from "../../../bench/lib/gen.js";
import { fleetOpenMetrics, queriedFamilies, scrapeTimes } from "../../../bench/fleet/prometheus.js";
import { behaviour } from "../../../bench/fleet/agents.js";
import { fmt, ratio, slope, summarize } from "../../../bench/lib/stats.js";
import { renderMarkdown } from "../../../bench/report.js";
import { parseNftChains, parseNftSets } from "../../../agent/parse/nft-json.js";
import { netnsAvailable, withNetns } from "../../helpers/netns.js";

// Smoke test of the benchmark's own code (never a timing): it builds kube-proxy-shaped state for
// N = 10 and reads back what it wrote. The benchmark itself runs with scripts/bench.sh.

t.test("ipvs-mode state for N = 10 x 3 endpoints", async (t) => {
  const svcs = services(0, 10, 3);
  const ipvs = ipvsadmRestore(svcs).trim().split("\n");
  // 10 ClusterIP virtual servers plus one NodePort (Service 0) on the node address.
  t.equal(ipvs.filter((l) => l.startsWith("-A ")).length, 11);
  t.equal(ipvs.filter((l) => l.startsWith("-a ")).length, 33);
  t.match(ipvs[0], /^-A -t 10\.96\.0\.1:80 -s rr$/);
  t.equal(new Set(svcs.flatMap((s) => s.endpoints)).size, 30, "endpoints are distinct");
  t.equal(kubeIpvs0Batch(svcs).trim().split("\n").length, 10);
  t.match(ipsetEntries(svcs), /add KUBE-CLUSTER-IP 10\.96\.0\.1,tcp:80 comment "ns0\/svc0:p80"/);
  t.same(chunks(10, 4), [
    [0, 4],
    [4, 8],
    [8, 10],
  ]);
});

t.test("nftables-mode state for N = 10 loads into a real namespace and lists back", async (t) => {
  if (!netnsAvailable()) return t.plan(0, "needs network namespaces (root)");
  const svcs = services(0, 10, 10);
  await withNetns((ns) => {
    ns.must(["nft", "-f", "-"], NFT_BASE + nftDeclarations(svcs));
    for (const [a, b] of chunks(10, 4)) ns.must(["nft", "-f", "-"], nftRulesAndElements(svcs.slice(a, b)));
    const chains = parseNftChains(ns.must(["nft", "-j", "list", "chains"]));
    t.ok(chains.ok);
    if (chains.ok) t.equal(chains.value.filter((c) => c.table === "kube-proxy").length, 16 + 10 * 11);
    const maps = parseNftSets(ns.must(["nft", "-j", "list", "maps", "ip"]));
    t.ok(maps.ok);
    if (maps.ok) t.equal(maps.value.find((m) => m.name === "service-ips")?.elements, 10);
  });
});

t.test("stats and the Markdown table read the results format", async (t) => {
  const s = summarize([3, 1, 2]);
  t.same(s, { median: 2, min: 1, max: 3, n: 3 });
  t.equal(fmt(ratio(s, summarize([1, 1, 1])), 1, "×"), "2.0× (1.0–3.0)");
  t.equal(slope([1, 2, 3, 4], 1), 1);
  const md = renderMarkdown({
    machine: {
      date: "2026-01-01T00:00:00Z",
      nproc: 2,
      cpuModel: "cpu",
      memoryGb: 1,
      kernel: "Linux 6",
      node: "v20",
    },
    plan: { reps: 2 },
    fleet: {
      "agents-10": {
        nodes: 10,
        concurrency: 32,
        timeoutMs: 5000,
        runs: [{ wallMs: 1, cpuMs: 1, maxRssMb: 2 }],
        floor: [{ wallMs: 1 }],
      },
    },
  });
  t.match(md, /\| agents \(static list, loopback\) \| 10 \|/);
  t.match(
    md,
    /\| c \| one full scan, ipvs mode \(UML\) \| — \|.*\| not measured \|/,
    "no ipvs phase: not measured",
  );
});

t.test("fleet: a deterministic mix of agent behaviours, and the OpenMetrics backfill input", async (t) => {
  const mix: Record<string, number> = {};
  for (let i = 0; i < 5000; i++) mix[behaviour(i)] = (mix[behaviour(i)] ?? 0) + 1;
  t.ok(mix.ok! > 4400 && mix.hung! > 0 && mix.down! > 0 && mix.garbage! > 0);
  // One sample per scrape, every 60 s from a minute before the data is written to the window's end:
  // an instant query at any moment of the measurement sees a sample under a minute old.
  t.same(scrapeTimes(1000, 120, 60), [940, 1000, 1060, 1120]);
  const om = fleetOpenMetrics(
    "# HELP x\n# TYPE proxyscope_scans_total counter\nproxyscope_scans_total 3\n" +
      "# TYPE proxyscope_last_scan_timestamp_seconds gauge\nproxyscope_last_scan_timestamp_seconds 5\n",
    2,
    [850, 910],
  );
  const n0 = 'node="node-0",job="proxyscope",instance="10.0.0.0:9977"';
  const n1 = 'node="node-1",job="proxyscope",instance="10.0.0.1:9977"';
  t.equal(
    om,
    [
      "# TYPE proxyscope_scans counter",
      `proxyscope_scans_total{${n0}} 3 850`,
      `proxyscope_scans_total{${n0}} 3 910`,
      `proxyscope_scans_total{${n1}} 3 850`,
      `proxyscope_scans_total{${n1}} 3 910`,
      "# TYPE proxyscope_last_scan_timestamp_seconds gauge",
      // A live agent's last scan: 30 s before each scrape, not the recording's.
      `proxyscope_last_scan_timestamp_seconds{${n0}} 820 850`,
      `proxyscope_last_scan_timestamp_seconds{${n0}} 880 910`,
      `proxyscope_last_scan_timestamp_seconds{${n1}} 820 850`,
      `proxyscope_last_scan_timestamp_seconds{${n1}} 880 910`,
      "# EOF",
      "",
    ].join("\n"),
  );
  // Only the families the Prometheus source queries are synthesised, when asked.
  const fams = queriedFamilies();
  t.ok(fams.has("proxyscope_node_phase") && !fams.has("proxyscope_scans_total"));
  t.equal(
    fleetOpenMetrics("# TYPE proxyscope_scans_total counter\nproxyscope_scans_total 3\n", 2, [1000], fams),
    "# EOF\n",
  );
});
