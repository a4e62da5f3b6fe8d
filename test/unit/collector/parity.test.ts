import t from "tap";
import { observationFromReport } from "../../../collector/gather/observe.js";
import { rollup } from "../../../collector/plan/rollup.js";
import { FleetReport } from "../../../collector/report/schema.js";
import { renderMarkdown } from "../../../collector/render/markdown.js";
import { renderHtml } from "../../../collector/render/html.js";
import type { NodeFacts } from "../../../agent/report/schema.js";
import { apiNode, input, ok } from "../../helpers/fleet.js";
import { reportOf } from "../../helpers/reports.js";
import { emptyFacts, metrics, noKernelState } from "../../helpers/facts.js";
import { NOW } from "../../helpers/rules.js";

// Parity in the fleet: each switched node's parity, its lost addresses named from the API's Services,
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

// --- the HTML page ---------------------------------------------------------------------------------

const XSS_SERVICE = `<img src=x onerror="document.body.dataset.pwned=1">`;

/** A node whose parity state is given as the agent would report it. */
const withParity = (node: string, p: Partial<NonNullable<NodeFacts["parity"]>> & { state: string }) =>
  observationFromReport(
    reportOf(
      emptyFacts({
        ...noKernelState,
        proxyMode: { mode: "nftables" },
        kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 5 }),
        parity: { path: "/var/lib/proxyscope/ipvs-snapshot.json", ...p } as NodeFacts["parity"],
      }),
      {},
      new Date(NOW * 1000),
    ),
    `http://${node}:9977`,
    node,
  );

t.test(
  "HTML: parity per node and fleet-wide, a stale snapshot called out, a Service name escaped",
  async (t) => {
    const inp = input(
      [
        switched("canary", ["10.96.0.20:80"]),
        withParity("old-snap", {
          state: "stale",
          takenAt: NOW - 3 * 86_400,
          ageSeconds: 3 * 86_400,
          maxAgeSeconds: 86_400,
        }),
        ok("moved", "nftables", "clean"),
        ok("b1", "ipvs", "ready"),
      ],
      [apiNode("canary"), apiNode("old-snap"), apiNode("moved"), apiNode("b1", undefined, { pool: "b" })],
    );
    inp.cluster.services = [
      {
        namespace: "shop",
        name: XSS_SERVICE,
        type: "ClusterIP",
        clusterIPs: ["10.96.0.20"],
        ports: [{ name: "http", protocol: "TCP", port: 80, nodePort: null }],
        sessionAffinity: null,
        internalTrafficPolicy: null,
        externalTrafficPolicy: null,
      },
    ];
    const page = renderHtml(FleetReport.parse(rollup(inp)));
    const section = /<section class="span12" id="parity">[\s\S]*?<\/section>/.exec(page)?.[0] ?? "";
    t.ok(section, "a parity section");
    // Fleet-wide: nodes compared, in both, missing after, new after, endpoints differ.
    t.match(section, /<b>1<\/b><span>nodes compared<\/span>/);
    t.match(section, /<b>8<\/b><span>in both<\/span>/);
    t.match(section, /<div class="tile t-bad"><b>1<\/b><span>missing after<\/span>/);
    t.match(section, /<b>0<\/b><span>new after<\/span>/);
    t.match(section, /<b>1<\/b><span>endpoints differ<\/span>/);
    // Per node, in column order: node, parity, snapshot age, in both, missing after, new after, endpoints differ, lost.
    const row = (n: string) => new RegExp(`<tr data-node="${n}">(.*?)</tr>`).exec(section)?.[1] ?? "";
    t.match(
      row("canary"),
      /<td>canary<\/td><td><span class="chip c-bad">compared<\/span><\/td><td>15 min<\/td><td>8<\/td><td><b class="c-bad">1<\/b><\/td><td>0<\/td><td>1<\/td><td><code>shop\/&lt;img src=x onerror=&quot;document\.body\.dataset\.pwned=1&quot;&gt; \(10\.96\.0\.20:80\/TCP\)<\/code><\/td>/,
    );
    t.notMatch(page, XSS_SERVICE, "the Service name never appears unescaped");
    t.match(
      row("old-snap"),
      /<span class="chip c-bad">stale snapshot: not compared<\/span><\/td><td><b class="c-bad">3 d<\/b><\/td><td>-<\/td>/,
    );
    t.match(section, /id="parity-stale">Stale snapshot on old-snap: older than its limit, so not compared/);
    // A switched node with no parity at all: not reported, never a row of zeros.
    t.match(
      row("moved"),
      /<td>moved<\/td><td><span class="chip c-none">not reported<\/span><\/td><td>-<\/td><td>-<\/td><td>-<\/td>/,
    );
    t.match(section, /Switched, parity not shown: old-snap, moved/);
    t.equal(row("b1"), "", "a node still on ipvs without parity is not listed");
  },
);

t.test(
  "an address reached only by ARP from kube-ipvs0: named from the API, shown as such, not served",
  async (t) => {
    const p = parity([]);
    if (p?.state !== "compared") return t.fail();
    const obs = observationFromReport(
      reportOf(
        emptyFacts({
          ...noKernelState,
          proxyMode: { mode: "nftables" },
          kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 5 }),
          parity: {
            ...p,
            counts: { ...p.counts, arpOnly: 1 },
            services: [
              {
                service: "shop/ext:http",
                protocol: "TCP",
                addresses: ["192.168.1.50:80"],
                status: "arp-only",
                endpointsBefore: 1,
                endpointsAfter: 1,
                gone: [],
                added: [],
              },
            ],
          },
        }),
        {},
        new Date(NOW * 1000),
      ),
      "http://canary:9977",
      "canary",
    );
    const inp = input([obs], [apiNode("canary")]);
    inp.cluster.services = [
      {
        namespace: "shop",
        name: "ext",
        type: "ClusterIP",
        clusterIPs: ["10.96.0.60"],
        ports: [{ name: "http", protocol: "TCP", port: 80, nodePort: null }],
        sessionAffinity: null,
        internalTrafficPolicy: null,
        externalTrafficPolicy: null,
        externalIPs: ["192.168.1.50"],
      },
    ];
    const r = FleetReport.parse(rollup(inp));
    t.same(r.nodes[0]?.parity?.arpOnly, ["shop/ext (192.168.1.50:80/TCP)"]);
    t.match(
      renderMarkdown(r),
      /reachable only by ARP from kube-ipvs0[^\n]*\n\|---\|---\|\n\| canary \| shop\/ext \(192\.168\.1\.50:80\/TCP\) \|/,
    );
    t.match(renderHtml(r), /ARP only[\s\S]*<code>shop\/ext \(192\.168\.1\.50:80\/TCP\)<\/code>/);
  },
);
