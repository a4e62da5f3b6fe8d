import t from "tap";
import { verifyChecks, type VerifyInput } from "../../../agent/verify/checks.js";
import type { NodeFacts, NodeReport } from "../../../agent/report/schema.js";
import { parseNftSets } from "../../../agent/parse/nft-json.js";
import { emptyFacts, noKernelState } from "../../helpers/facts.js";
import { reportOf } from "../../helpers/reports.js";

// The pure side of verify's NodePort and rollback lines; the kernel side is in
// test/kernel/verify-nodeport-netns.test.ts and verify-rollback-uml.test.ts.
const NOW = Date.parse("2026-01-01T00:00:00.000Z") / 1000;
const iface = (name: string, address: string, kind: string | null = null) => ({
  name,
  kind,
  operState: "UP",
  addresses: [{ family: "inet" as const, address, prefixLen: 24, scope: "global" }],
});
const ADDRESSES: NodeFacts["addresses"] = {
  interfaces: [
    iface("eth0", "10.0.0.1"),
    iface("eth1", "10.1.0.1"),
    iface("docker0", "172.17.0.1", "bridge"),
  ],
  primary: { ipv4: "10.0.0.1", ipv6: null, source: "default-route" },
};
const table = (over: object = {}) => ({
  family: "ip" as const,
  name: "kube-proxy",
  sets: [],
  chains: { total: 1, service: 0, endpoint: 0, external: 0, base: [] },
  nodePorts: ["TCP:30080"],
  nodePortsWithEndpoints: ["TCP:30080"],
  nodePortIPs: ["10.0.0.1"] as string[] | null,
  ...over,
});
const nft = (over: object = {}): NodeFacts["nftables"] => ({
  tables: [],
  kubeProxyTableName: "kube-proxy",
  kubeProxy: [table(over)],
  firewalls: [],
});
const vs = (address: string, port: number, realServers = 1) => ({
  protocol: "TCP" as const,
  family: "inet" as const,
  address,
  port,
  fwmark: null,
  scheduler: "rr",
  flags: [],
  persistentTimeoutJiffies: null,
  realServers,
  activeConns: 0,
  inactiveConns: 0,
});
const ipvsTable = (list: ReturnType<typeof vs>[]): NodeFacts["ipvs"] => ({
  available: true,
  virtualServerCount: list.length,
  realServerCount: list.reduce((n, v) => n + v.realServers, 0),
  schedulers: { rr: list.length },
  virtualServers: list,
  timeouts: null,
});
const dummy = (addresses: string[]): NodeFacts["kubeIpvs0"] => ({
  present: true,
  kind: "dummy",
  operState: "DOWN",
  flags: [],
  addresses: addresses.map((address) => ({ family: "inet" as const, address, prefixLen: 32 })),
});
function report(over: Partial<NodeFacts>): NodeReport {
  return reportOf(
    emptyFacts({ ...noKernelState, addresses: ADDRESSES, proxyMode: { mode: "nftables" }, ...over }),
    {},
    new Date(NOW * 1000),
  );
}
const line = (r: NodeReport, id: string, over: Partial<VerifyInput> = {}) =>
  verifyChecks({ report: r, second: null, syncWindowS: 0, connect: { kind: "skipped" }, ...over }).find(
    (c) => c.id === id,
  );

t.test("nftables: the secondary is not served, docker0 is skipped by name", async (t) => {
  const c = line(report({ nftables: nft() }), "nodeport-addresses");
  t.equal(c?.status, "fail");
  t.match(
    c?.detail,
    /^not served: 10\.1\.0\.1 \(eth1\): not in kube-proxy's nodeport-ips set; served: 10\.0\.0\.1 \(eth0\); skipped: 172\.17\.0\.1 \(docker0\)/,
  );
});

t.test(
  "nftables: no nodeport-ips set means every local address (nodePortAddresses matches all)",
  async (t) => {
    const c = line(report({ nftables: nft({ nodePortIPs: null }) }), "nodeport-addresses");
    t.equal(c?.status, "ok");
    t.match(c?.detail, /^served: 10\.0\.0\.1 \(eth0\), 10\.1\.0\.1 \(eth1\)/);
  },
);

t.test("unread is never a pass", async (t) => {
  const old = report({ nftables: nft({ nodePortIPs: undefined }) });
  t.equal(line(old, "nodeport-addresses")?.status, "not-run", "nodeport-ips not read (an older agent)");
  t.equal(line(report({ nftables: null }), "nodeport-addresses")?.status, "not-run");
  t.equal(line(report({ nftables: nft(), addresses: null }), "nodeport-addresses")?.status, "not-run");
  const silent = line(report({ nftables: nft(), proxyMode: null }), "nodeport-addresses");
  t.equal(silent?.status, "not-run");
  t.match(silent?.detail, /did not answer \/proxyMode/);
  const ipvs = report({ proxyMode: { mode: "ipvs" }, ipvs: ipvsTable([vs("10.0.0.1", 30080)]) });
  t.match(line(ipvs, "nodeport-addresses")?.detail, /KUBE-NODE-PORT-\* ipsets not read/);
});

t.test("ipvs: a NodePort virtual server per port on each address", async (t) => {
  const facts = {
    proxyMode: { mode: "ipvs" },
    ipsets: { sets: [], nodePorts: ["TCP:30080", "TCP:30081"] },
    ipvs: ipvsTable([vs("10.0.0.1", 30080), vs("10.0.0.1", 30081), vs("10.1.0.1", 30080)]),
  };
  const c = line(report(facts), "nodeport-addresses", { expectMode: "ipvs" });
  t.equal(c?.status, "fail");
  t.match(c?.detail, /not served: 10\.1\.0\.1 \(eth1\): virtual servers for 1 of 2 NodePorts/);
});

t.test("the connect: skipped unless asked, each address's outcome named", async (t) => {
  const r = report({ nftables: nft() });
  t.equal(line(r, "nodeport-connect")?.status, "skipped");
  const done = line(r, "nodeport-connect", {
    nodePortConnect: {
      kind: "done",
      port: 30080,
      results: [
        { address: "10.0.0.1", outcome: { ok: true, localAddress: null, durationMs: 2 } },
        { address: "10.1.0.1", outcome: { ok: false, error: "ECONNREFUSED", durationMs: 1 } },
      ],
    },
  });
  t.equal(done?.status, "fail");
  t.equal(done?.detail, "10.0.0.1:30080 in 2 ms, 10.1.0.1:30080: ECONNREFUSED");
  const none = line(
    report({ nftables: nft({ nodePorts: [], nodePortsWithEndpoints: [] }) }),
    "nodeport-connect",
    {
      nodePortConnect: { kind: "no-target" },
    },
  );
  t.equal(none?.status, "skipped", "no NodePorts: nothing to connect to");
});

t.test("rollback: kube-ipvs0 must hold every Service IP IPVS serves", async (t) => {
  const ipvsNode = (
    addresses: string[],
    list = [vs("10.96.0.1", 443), vs("10.96.0.10", 53), vs("10.0.0.1", 30080)],
  ) =>
    report({
      proxyMode: { mode: "ipvs" },
      ipvs: ipvsTable(list),
      kubeIpvs0: dummy(addresses),
      ipsets: { sets: [], nodePorts: [] },
    });
  const whole = line(ipvsNode(["10.96.0.1", "10.96.0.10"]), "kube-ipvs0-service-ips", { expectMode: "ipvs" });
  t.equal(whole?.status, "ok");
  t.equal(
    whole?.detail,
    "2 of 2 Service IPs IPVS serves are on kube-ipvs0",
    "the NodePort on a node address is no Service IP",
  );
  const gap = line(ipvsNode(["10.96.0.1"]), "kube-ipvs0-service-ips", { expectMode: "ipvs" });
  t.equal(gap?.status, "fail");
  t.equal(gap?.detail, "1 of 2 Service IPs IPVS serves are on kube-ipvs0; missing: 10.96.0.10");
  const none = line(ipvsNode(["10.96.0.1"], [vs("10.96.0.1", 443, 0)]), "ipvs-virtual-servers-present", {
    expectMode: "ipvs",
  });
  t.equal(none?.status, "fail", "virtual servers without a single real server are not a data plane");
  t.equal(
    line(report({ proxyMode: { mode: "ipvs" }, ipvs: null }), "ipvs-virtual-servers-present", {
      expectMode: "ipvs",
    })?.status,
    "not-run",
  );
  t.equal(
    line(report({ proxyMode: { mode: "ipvs" }, kubeIpvs0: null }), "kube-ipvs0-service-ips", {
      expectMode: "ipvs",
    })?.status,
    "not-run",
  );
  const mode = line(ipvsNode(["10.96.0.1", "10.96.0.10"]), "proxy-mode", { expectMode: "ipvs" });
  t.equal(mode?.status, "ok", "ipvs is what a rollback expects");
  const left = line(report({ proxyMode: { mode: "ipvs" }, nftables: nft() }), "nftables-table-left", {
    expectMode: "ipvs",
  });
  t.equal(left?.status, "fail");
  t.match(left?.detail, /^left: ip kube-proxy: .*nft delete table ip kube-proxy$/);
});

t.test("a cut IPVS table in an older agent's report is not read, never complete", async (t) => {
  const r = report({
    proxyMode: { mode: "ipvs" },
    ipvs: ipvsTable([vs("10.96.0.1", 443)]),
    kubeIpvs0: dummy([]),
  });
  const old: NodeReport = {
    ...r,
    view: { ...r.view!, ipvsPlane: undefined },
    truncated: { "facts.ipvs.virtualServers": 5000 },
  };
  t.equal(line(old, "kube-ipvs0-service-ips", { expectMode: "ipvs" })?.status, "not-run");
});

t.test("nodeport-ips is parsed from nft's JSON; an element that is not one address is unread", async (t) => {
  const set = (elem: unknown) =>
    JSON.stringify({
      nftables: [
        { set: { family: "ip", name: "nodeport-ips", table: "kube-proxy", type: "ipv4_addr", elem } },
      ],
    });
  const p = parseNftSets(set(["192.168.0.2", { elem: { val: "10.0.0.1", comment: "x" } }]));
  t.same(p.ok && p.value[0]?.addresses, ["192.168.0.2", "10.0.0.1"]);
  t.equal(parseNftSets(set([{ prefix: { addr: "10.0.0.0", len: 8 } }])).ok, false);
});
