// `proxyscope report --changes`: the API's Services and the fleet's findings → what changes for each
// Service at the switch to nftables mode (docs/ipvs-to-nftables.md), and where.
import t from "tap";
import { serviceChanges } from "../../../collector/plan/changes/service-changes.js";
import { rollup } from "../../../collector/plan/rollup.js";
import type { ApiService } from "../../../collector/report/cluster-facts.js";
import type { NodeObservation } from "../../../collector/report/schema.js";
import { renderChangesCsv } from "../../../collector/render/changes-csv.js";
import { renderChangesMarkdown } from "../../../collector/render/changes-markdown.js";
import { renderChangesHtml } from "../../../collector/render/changes-html.js";
import { apiNode, cfg, facts, ok } from "../../helpers/fleet.js";

const svc = (over: Partial<ApiService> & Pick<ApiService, "name">): ApiService => ({
  namespace: "shop",
  type: "ClusterIP",
  clusterIPs: ["10.96.0.20"],
  ports: [{ name: "http", protocol: "TCP", port: 80, nodePort: null }],
  sessionAffinity: "None",
  internalTrafficPolicy: "Cluster",
  externalTrafficPolicy: null,
  externalIPs: [],
  loadBalancerIPs: [],
  healthCheckNodePort: null,
  ...over,
});

const finding = (id: string, evidence: Record<string, unknown>) => ({
  id,
  severity: "warning" as const,
  stage: "before" as const,
  blocksMigration: false,
  title: id,
  evidence: evidence as never,
  remedy: "-",
  reference: "-",
});

const SERVICES: ApiService[] = [
  svc({
    name: "lb",
    type: "LoadBalancer",
    clusterIPs: ["10.96.0.30"],
    ports: [{ name: "https", protocol: "TCP", port: 443, nodePort: 31443 }],
    externalTrafficPolicy: "Local",
    healthCheckNodePort: 32000,
    loadBalancerIPs: ["192.168.1.240"],
  }),
  svc({ name: "sticky", sessionAffinity: "ClientIP" }),
  svc({ name: "plain", clusterIPs: ["10.96.0.40"] }),
];

function report(observations: NodeObservation[], services = SERVICES) {
  const cluster = facts({ nodes: ["a", "b", "c"].map((n) => apiNode(n)), services }, cfg({ mode: "ipvs" }));
  const r = rollup({
    source: "agents",
    collectorVersion: "0.1.0",
    generatedAt: new Date("2026-11-29T12:00:00Z"),
    cluster,
    observations,
    missingOutcome: "no-agent",
  });
  return { cluster, report: r };
}

const fleet = () =>
  report([
    ok("a", "ipvs", "attention", [
      finding("nodeport-addresses-shrink", {
        primary: ["10.0.0.1"],
        secondaryAddresses: ["10.0.5.1 (eth1)"],
        withConnections: ["TCP 10.0.5.1:31443 (2 active, 0 inactive)"],
      }),
      finding("health-check-nodeports-shrink", { healthCheckNodePorts: [32000] }),
      finding("service-ips-answered-by-arp", {
        serviceIpsOnLink: ["192.168.1.240 (in eth0's 192.168.1.0/24)"],
      }),
      finding("ipvs-connections-cut-at-switch", {
        established: 7,
        virtualServersWithConnections: 1,
        top: ["TCP 10.96.0.20:80 (Service IP): 7 established"],
      }),
      finding("ipvs-scheduler-not-rr", { configured: "sh", schedulersOfKubeProxyVirtualServers: ["sh"] }),
    ]),
    ok("b", "ipvs", "ready", []),
    // c gave no report: nothing it would have said is taken as "nothing there".
  ]);

const linesOf = (c: ReturnType<typeof serviceChanges>, service: string) =>
  c.lines.filter((l) => l.service === service);

t.test("each Service gets the rows that apply to it, with the nodes the findings name", async (t) => {
  const { cluster, report: r } = fleet();
  const c = serviceChanges(cluster, r);
  const lb = linesOf(c, "shop/lb");
  const row = (n: number) => lb.find((l) => l.row === n);
  t.same(row(8)?.nodes, ["a", "b"], "ETP Local: in-cluster callers go to all endpoints, on the ipvs nodes");
  t.match(row(8)?.notKnown.join(" "), /c: no usable report/, "c not read: not known");
  t.same(row(2)?.nodes, ["a"], "health-check NodePort shrinks where the finding names its port");
  t.same(row(1)?.nodes, ["a"]);
  t.match(row(1)?.detail.join(" "), /10\.0\.5\.1/, "the secondary addresses from the evidence");
  t.same(row(3)?.nodes, ["a"], "its LB IP is answered by ARP on a");
  t.same(row(10)?.nodes, ["a"]);
  t.notOk(row(9), "no affinity");
  t.equal(row(4)?.known, false, "no connections named for it on a, and c was not read: not known");
  t.same(row(4)?.nodes, []);
  for (const n of [1, 2, 3, 10])
    t.match(row(n)?.notKnown.join(" "), /c: no usable report/, `row ${n}: node c not read is said`);
  t.match(row(2)?.findingPage, /health-check-nodeports-shrink\.md$/);
  t.match(row(2)?.why, /ipvs-to-nftables\.md.*row 2/);

  const sticky = linesOf(c, "shop/sticky");
  t.same(sticky.find((l) => l.row === 9)?.nodes, ["a", "b"], "ClientIP affinity changes on every ipvs node");
  t.same(sticky.find((l) => l.row === 4)?.nodes, ["a"], "its ClusterIP:port holds connections on a");
  t.notOk(sticky.find((l) => l.row === 8));

  const plain = linesOf(c, "shop/plain");
  t.same(
    plain.map((l) => [l.row, l.known]),
    [
      [4, false],
      [18, false],
      [10, true],
    ],
    "a plain ClusterIP Service: the scheduler change; a cut or a flow to its IP not seen on a but c not read",
  );
});

t.test("a cut list of the busiest virtual servers leaves the rest not known", async (t) => {
  const { cluster, report: r } = report([
    ok("a", "ipvs", "attention", [
      finding("ipvs-connections-cut-at-switch", {
        established: 9,
        virtualServersWithConnections: 4,
        top: ["TCP 10.96.0.20:80 (Service IP): 7 established"],
      }),
    ]),
  ]);
  const c = serviceChanges(cluster, r);
  const plain = linesOf(c, "shop/plain").find((l) => l.row === 4);
  t.ok(plain, "a Service not among the named is not taken as unaffected");
  t.equal(plain?.known, false);
  t.same(plain?.nodes, []);
  t.match(plain?.notKnown.join(" "), /a: only the 1 busiest of 4/);
});

t.test("a probe the finding needs failed: that node is not known, not clean", async (t) => {
  const obs = ok("b", "ipvs", "ready", []);
  obs.failedProbes = ["addresses"];
  const { cluster, report: r } = report([obs]);
  const lb = linesOf(serviceChanges(cluster, r), "shop/lb").find((l) => l.row === 1);
  t.equal(lb?.known, false);
  t.match(lb?.notKnown.join(" "), /b: .*addresses.*not read/);
});

t.test("Services not read: said, not an empty list", async (t) => {
  const { report: r } = fleet();
  const noApi = serviceChanges(null, r);
  t.same(noApi.lines, []);
  t.match(noApi.notKnown.join(" "), /not known: .*no Service was read/);
  const denied = serviceChanges(
    facts({ services: [], gaps: [{ what: "services (all namespaces)", reason: "403 Forbidden" }] }),
    r,
  );
  t.match(denied.notKnown.join(" "), /not known: .*403 Forbidden/);
});

t.test("everything the API or a node supplies is escaped in every format", async (t) => {
  const evil = "<img src=x onerror=alert(1)>|`x` http://evil.example =cmd\u001b[31m";
  const { cluster, report: r } = report(
    [ok("a", "ipvs", "attention", [finding("ipvs-scheduler-not-rr", { configured: evil })])],
    [svc({ namespace: "=ns", name: evil, sessionAffinity: "ClientIP" })],
  );
  const c = serviceChanges(cluster, r);
  const html = renderChangesHtml(c);
  t.notMatch(html, /<img/, "HTML: no markup from the API");
  const md = renderChangesMarkdown(c);
  t.notMatch(md, /<img/, "Markdown: no markup");
  t.notMatch(md, /[^`]http:\/\/evil/, "Markdown: a URL from the API is a code span, never a link");
  t.notMatch(md, /\| `x` \|/);
  const csv = renderChangesCsv(c);
  t.notOk(csv.includes("\u001b"), "CSV: no raw control character");
  t.match(csv, /\r\n"?'=ns\//, "CSV: a Service cell starting with = is no formula");
  t.notMatch(csv, /(^|,)=ns/m);
});

t.test("a field or evidence not carried is not known; a node past the switch is not counted", async (t) => {
  // What --source prometheus gives: the finding's id and severity, no evidence.
  const bare = (id: string) => {
    const f = finding(id, {});
    delete (f as { evidence?: unknown }).evidence;
    return f;
  };
  const { cluster, report: r } = report([
    ok("a", "ipvs", "attention", [bare("nodeport-addresses-shrink"), bare("service-ips-answered-by-arp")]),
    ok("b", "nftables", "clean", [finding("nodeport-addresses-shrink", { secondaryAddresses: ["x"] })]),
    ok("c", "ipvs", "ready", []),
  ]);
  r.source = "prometheus";
  const older = cluster.services.map((s) => {
    const { healthCheckNodePort: _, ...rest } = s;
    return rest;
  });
  const lb = linesOf(serviceChanges({ ...cluster, services: older }, r), "shop/lb");
  const row = (n: number) => lb.find((l) => l.row === n);
  t.same(row(1)?.nodes, ["a"], "every NodePort shrinks where the finding fired; b runs nftables already");
  t.equal(row(3)?.known, false, "which IPs ARP answers needs the evidence");
  t.match(row(3)?.notKnown.join(" "), /a: .*--source prometheus carries no evidence/);
  t.match(row(2)?.where, /not known: .*healthCheckNodePort was not read/);
});

t.test("Services kube-proxy does not proxy get no line", async (t) => {
  // Headless (clusterIP None) and ExternalName Services have no virtual server in any mode
  // (kubernetes pkg/proxy/util/utils.go ShouldSkipService): the switch changes nothing for them.
  const headless = svc({ name: "headless", clusterIPs: ["None"], sessionAffinity: "ClientIP" });
  const external = svc({ name: "external", type: "ExternalName", clusterIPs: [], ports: [] });
  const { report: r } = fleet();
  const { cluster } = report([], [...SERVICES, headless, external]);
  const c = serviceChanges(cluster, r);
  t.same(linesOf(c, "shop/headless"), [], "headless: no scheduler, affinity or cut line");
  t.same(linesOf(c, "shop/external"), [], "ExternalName: nothing");
  t.ok(linesOf(c, "shop/plain").length > 0, "a proxied Service still gets its lines");
});

t.test("an IPv6 address the API spells another way still names its Service", async (t) => {
  // The API keeps an address as written (a non-canonical IPv6 is accepted with a warning); the kernel,
  // and so the evidence, prints the canonical form (RFC 5952).
  const v6 = svc({
    name: "v6",
    type: "LoadBalancer",
    clusterIPs: ["fd00:10:96:0:0:0:0:30"],
    ports: [{ name: "https", protocol: "TCP", port: 443, nodePort: null }],
    loadBalancerIPs: ["2001:DB8:0:0::240"],
  });
  const { cluster, report: r } = report(
    [
      ok("a", "ipvs", "attention", [
        finding("service-ips-answered-by-arp", {
          serviceIpsOnLink: ["2001:db8::240 (in eth0's 2001:db8::/64)"],
        }),
        finding("ipvs-connections-cut-at-switch", {
          established: 3,
          virtualServersWithConnections: 1,
          top: ["TCP [fd00:10:96::30]:443 (Service IP): 3 established"],
        }),
      ]),
    ],
    [v6],
  );
  const lines = linesOf(serviceChanges(cluster, r), "shop/v6");
  t.same(lines.find((l) => l.row === 3)?.nodes, ["a"], "ARP: its LB IP, canonical on the node");
  t.same(lines.find((l) => l.row === 4)?.nodes, ["a"], "cut: its ClusterIP:port, canonical on the node");
});

t.test("the Service-wide rows name the ipvs nodes, not 'all nodes' past the switch", async (t) => {
  // ETP Local and ClientIP affinity change where a node moves from ipvs to nftables: a node already
  // past the switch changes nothing, a node not read is not known.
  const { cluster, report: r } = report([
    ok("a", "ipvs", "ready", []),
    ok("b", "nftables", "clean", []),
    // c gave no report
  ]);
  const c = serviceChanges(cluster, r);
  const etp = linesOf(c, "shop/lb").find((l) => l.row === 8);
  t.same(etp?.nodes, ["a"], "only the node still on ipvs");
  t.match(etp?.notKnown.join(" "), /c: no usable report/);
  const all = serviceChanges(
    ...((x) => [x.cluster, x.report] as const)(
      report([ok("a", "ipvs", "ready", []), ok("b", "ipvs", "ready", []), ok("c", "ipvs", "ready", [])]),
    ),
  );
  t.equal(linesOf(all, "shop/sticky").find((l) => l.row === 9)?.where, "all nodes", "every node on ipvs");
  const past = serviceChanges(
    ...((x) => [x.cluster, x.report] as const)(
      report([
        ok("a", "nftables", "clean", []),
        ok("b", "nftables", "clean", []),
        ok("c", "iptables", "clean", []),
      ]),
    ),
  );
  t.notOk(
    linesOf(past, "shop/sticky").find((l) => l.row === 9),
    "no node on ipvs: no change",
  );
});

t.test("ETP Local: the in-cluster callers the nodes saw are named on the Service's line", async (t) => {
  const { cluster, report: r } = report([
    ok("a", "ipvs", "attention", [
      finding("etp-local-in-cluster-callers", {
        connections: [
          "TCP 192.168.1.240:443 (7 connections)",
          "TCP 10.0.0.1:31443 (2 connections)",
          "TCP 198.51.100.9:80 (1 connections)",
        ],
      }),
    ]),
    ok("b", "ipvs", "ready", []),
    ok("c", "ipvs", "ready", []),
  ]);
  const row8 = linesOf(serviceChanges(cluster, r), "shop/lb").find((l) => l.row === 8);
  t.equal(row8?.where, "all nodes", "the change holds on every ipvs node");
  t.same(row8?.detail, [
    "a: in-cluster callers seen: TCP 192.168.1.240:443 (7 connections)",
    "a: in-cluster callers seen: TCP 10.0.0.1:31443 (2 connections)",
  ]);
});

t.test("Service IPs used beyond their ports: the Service whose IP the flows went to", async (t) => {
  const { cluster, report: r } = report([
    ok("a", "ipvs", "blocked", [
      finding("service-ips-host-ports-close", {
        flowsToServiceIps: ["10.96.0.40 ICMP (3 connections)", "10.96.0.40 TCP :22 (1 connections)"],
      }),
    ]),
    ok("b", "ipvs", "attention", [
      finding("service-ips-host-ports-close", { flowsToServiceIps: "not read: io" }),
    ]),
    ok("c", "ipvs", "ready", []),
  ]);
  const c = serviceChanges(cluster, r);
  const plain = linesOf(c, "shop/plain").find((l) => l.row === 18);
  t.same(plain?.nodes, ["a"]);
  t.same(plain?.detail, ["a: 10.96.0.40 ICMP (3 connections)", "a: 10.96.0.40 TCP :22 (1 connections)"]);
  t.match(plain?.notKnown.join(" "), /b: its flows to Service IPs were not read/);
  t.match(plain?.findingPage, /service-ips-host-ports-close\.md$/);
  const lb = linesOf(c, "shop/lb").find((l) => l.row === 18);
  t.same(lb?.nodes, [], "no flow to the LB Service's IPs on a");
  t.equal(lb?.known, false, "but b could not say");
});
