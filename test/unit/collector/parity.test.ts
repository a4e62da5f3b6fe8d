import t from "tap";
import { observationFromReport } from "../../../collector/observe.js";
import { rollup } from "../../../collector/rollup.js";
import { FleetReport } from "../../../collector/report/schema.js";
import { renderMarkdown } from "../../../collector/render/markdown.js";
import type { NodeFacts } from "../../../agent/report/schema.js";
import { apiNode, input, ok } from "../../helpers/fleet.js";
import { reportOf } from "../../helpers/reports.js";
import { emptyFacts, metrics, noKernelState } from "../../helpers/facts.js";
import { NOW } from "../../helpers/rules.js";

// #17 in the fleet: each switched node's parity, its lost addresses named from the API's Services,
// the fleet tally, and the canary step stopping the next pool on a lost Service.
const parity = (missing: string[]): NodeFacts["parity"] => ({
  state: "compared",
  path: "/var/lib/proxyscope/ipvs-snapshot.json",
  takenAt: NOW - 900,
  ageSeconds: 900,
  maxAgeSeconds: 86_400,
  counts: { same: 8, missingAfter: missing.length, endpointsDiffer: 1, newAfter: 0 },
  services: missing.map((a) => ({
    service: null,
    protocol: "TCP" as const,
    addresses: [a],
    status: "missing-after" as const,
    endpointsBefore: 1,
    endpointsAfter: 0,
    gone: [],
    added: [],
  })),
  truncated: false,
});
const switched = (node: string, missing: string[]) =>
  observationFromReport(
    reportOf(
      emptyFacts({
        ...noKernelState,
        proxyMode: { mode: "nftables" },
        kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 5 }),
        parity: parity(missing),
      }),
      {},
      new Date(NOW * 1000),
    ),
    `http://${node}:9977`,
    node,
  );

t.test("a canary that lost a Service: named, tallied, and the next pool waits", async (t) => {
  const inp = input(
    [
      switched("canary", ["10.96.0.20:80", "nodeport:30080"]),
      ok("b1", "ipvs", "ready"),
      ok("b2", "ipvs", "ready"),
    ],
    [apiNode("canary"), apiNode("b1", undefined, { pool: "b" }), apiNode("b2", undefined, { pool: "b" })],
  );
  inp.cluster.services = [
    {
      namespace: "shop",
      name: "cart",
      type: "NodePort",
      clusterIPs: ["10.96.0.20"],
      ports: [{ name: "http", protocol: "TCP", port: 80, nodePort: 30080 }],
      sessionAffinity: null,
      internalTrafficPolicy: null,
      externalTrafficPolicy: null,
    },
  ];
  const r = FleetReport.parse(rollup(inp));
  t.same(r.nodes.find((n) => n.node === "canary")?.parity?.lost, [
    "shop/cart (10.96.0.20:80/TCP)",
    "shop/cart (nodeport:30080/TCP)",
  ]);
  t.match(r.summary.parity, { nodesWithLost: ["canary"], missingAfter: 2, endpointsDiffer: 1, same: 8 });
  const step = r.plan.find((p) => p.id === "canary-then-pools")!;
  t.equal(step.status, "blocked");
  t.match(step.detail, /Services lost in the switch on canary: fix them before the next pool/);
  t.match(
    renderMarkdown(r),
    /\| canary \| compared \| 15 min \| 8 \| 2 \| 1 \| shop\/cart \(10\.96\.0\.20:80\/TCP\)/,
  );
});

t.test(
  "a clean canary: the step asks for parity before the next pool, and is not blocked by it",
  async (t) => {
    const r = rollup(
      input(
        [switched("canary", []), ok("b1", "ipvs", "ready")],
        [apiNode("canary"), apiNode("b1", undefined, { pool: "b" })],
      ),
    );
    const step = r.plan.find((p) => p.id === "canary-then-pools")!;
    t.equal(step.status, "todo");
    t.match(step.detail, /check parity on the switched nodes/);
  },
);

t.test("a switched node without parity is not proof: said so", async (t) => {
  const r = rollup(
    input([ok("moved", "nftables", "clean"), ok("b1", "ipvs", "ready")], [apiNode("moved"), apiNode("b1")]),
  );
  t.match(
    r.plan.find((p) => p.id === "canary-then-pools")?.detail,
    /parity not shown on switched node\(s\) moved/,
  );
  t.same(r.summary.parity?.byState, { unknown: 2 });
});
