import t from "tap";
import { addresses, ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";
import { configz, vs } from "../../../helpers/facts.js";

// What a careful SRE expects, written before the rule (test/profiles/profiles.md P1 kubeadm, the
// corpus' kubeadm-calico node: eth0 172.18.0.10/16, kube-ipvs0 holding ClusterIPs 10.96.0.0/12 and
// 172.30.0.41, strictARP off):
// - ClusterIPs only, none inside eth0's prefix: nothing is reached by ARP, the node stays `ready`.
// - An externalIP or LoadBalancer IP inside eth0's prefix, strictARP off (arp_ignore=0): every node
//   answers ARP for it today, nftables mode binds nothing, so unless MetalLB/kube-vip/BGP announces it
//   the IP goes dark at the switch: a warning naming the IP, `attention` (the agent cannot see an
//   announcer, so not blocking).
// - strictARP on (arp_ignore=1, MetalLB's documented requirement with ipvs): the node answered no ARP
//   for kube-ipvs0 addresses, so something else announces them: nothing.
// - sysctls or addresses unread: the check is not read (no finding, and the fact is null), never "does not apply".
const sysctls = (ignore: string | null, announce: string | null = "0") => ({
  values: [
    { name: "net.ipv4.conf.all.arp_ignore", value: ignore },
    { name: "net.ipv4.conf.all.arp_announce", value: announce },
  ],
});
const node = (kubeIpvs0Ips: string[], over = {}) => {
  const f = ipvsNode({
    addresses: { ...addresses("172.18.0.10"), interfaces: [...addresses("172.18.0.10").interfaces] },
    sysctls: sysctls("0"),
    ...over,
  });
  f.addresses!.interfaces[1]!.addresses[0]!.prefixLen = 16;
  f.kubeIpvs0!.addresses.push(
    ...kubeIpvs0Ips.map((address) => ({ family: "inet" as const, address, prefixLen: 32 })),
  );
  return f;
};
const ID = "service-ips-answered-by-arp";

t.test("ClusterIPs outside every on-link prefix: ready, nothing raised", async (t) => {
  const j = judge(node(["172.30.0.41"]), new Map(), NOW);
  t.notOk(ids(j).includes(ID));
  t.equal(j.verdict, "ready");
});

t.test(
  "an externalIP in eth0's prefix, strictARP off: a warning naming the IP and its traffic",
  async (t) => {
    const f = node(["172.18.0.200", "172.18.5.7"]);
    f.ipvs!.virtualServers.push(
      vs("172.18.0.200", 443, { activeConns: 4, inactiveConns: 1 }),
      vs("172.18.5.7", 80),
    );
    const j = judge(f, new Map(), NOW);
    const x = j.findings.find((y) => y.id === ID);
    t.equal(x?.severity, "warning");
    t.equal(x?.blocksMigration, false);
    t.same(x?.evidence.serviceIpsOnLink, [
      "172.18.0.200 (in eth0's 172.18.0.10/16)",
      "172.18.5.7 (in eth0's 172.18.0.10/16)",
    ]);
    t.same(x?.evidence.withConnections, ["TCP 172.18.0.200:443 (4 active, 1 inactive)"]);
    t.equal(x?.evidence["net.ipv4.conf.all.arp_ignore"], "0");
    t.match(x?.title, /2 Service IPs/);
    t.equal(j.verdict, "attention");
  },
);

t.test("strictARP on: the node answered no ARP for them, something else announces", async (t) => {
  const j = judge(node(["172.18.0.200"], { sysctls: sysctls("1", "2") }), new Map(), NOW);
  t.notOk(ids(j).includes(ID));
  t.equal(j.verdict, "ready");
});

t.test("the node's own address on kube-ipvs0 (externalIP = node IP) stays local: not counted", async (t) => {
  const j = judge(node(["172.18.0.10"]), new Map(), NOW);
  t.notOk(ids(j).includes(ID));
});

t.test("unread addresses or sysctls: not raised and the check reads as not read, never clean", async (t) => {
  for (const over of [{ sysctls: null }, { addresses: null }]) {
    const f = ipvsNode({ sysctls: sysctls("0"), ...over });
    f.kubeIpvs0!.addresses.push({ family: "inet", address: "192.168.4.200", prefixLen: 32 });
    const j = judge(f, new Map([[Object.keys(over)[0]!, { kind: "exec-failed", message: "x" }]]), NOW);
    t.notOk(ids(j).includes(ID));
    t.not(j.verdict, "ready", "a hole in the scan is never ready");
  }
  const arpUnread = node(["172.18.0.200"], { sysctls: sysctls(null) });
  const x = judge(arpUnread, new Map(), NOW).findings.find((y) => y.id === ID);
  t.equal(x?.severity, "warning", "arp_ignore missing is not strictARP on: still raised");
  t.equal(x?.evidence["net.ipv4.conf.all.arp_ignore"], "not read");
  const ipvsUnread = node(["172.18.0.200"], { ipvs: null });
  t.equal(
    judge(ipvsUnread, new Map([["ipvs", { kind: "exec-failed", message: "x" }]]), NOW).findings.find(
      (y) => y.id === ID,
    )?.evidence.withConnections,
    "not read: the IPVS table could not be read",
    "connections unread are not 'none'",
  );
});

t.test("not before the switch in iptables phase, nor after it", async (t) => {
  const f = node(["172.18.0.200"], {
    proxyMode: { mode: "nftables" },
    configz: configz({ mode: "nftables" }),
  });
  t.notOk(ids(judge(f, new Map(), NOW)).includes(ID));
});
