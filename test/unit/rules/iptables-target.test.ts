import t from "tap";
import { addresses, ids, ipvsNode, judge, kernel, NOW } from "../../helpers/rules.js";
import { configz, iptablesBackend, vs } from "../../helpers/facts.js";

// A node below kernel 5.13 goes to iptables mode, not nftables (kernel-too-old-for-nftables' own advice).
// What an SRE expects there, written before the rules changed: no advice about what nftables mode does
// differently — NodePorts keep every address (nodePortAddresses defaults to primary in nftables mode only:
// cmd/kube-proxy/app/server_linux.go platformApplyDefaults), iptables mode keeps accepting NodePort traffic
// itself (KUBE-FORWARD, KUBE-NODEPORTS) and keeps the INVALID-drop workaround, and it keeps serving localhost
// NodePorts. A kernel not read is not old: the advice stands.
const NFTABLES_ONLY = [
  "conntrack-workaround-relied-on",
  "host-firewall-needs-nodeport-range",
  "localhost-nodeports-not-measurable",
  "nodeport-addresses-shrink",
];

const node = (release: string | null, mode: "ipvs" | "iptables") => {
  const f = ipvsNode({
    kernel: release === null ? null : kernel(release),
    proxyMode: { mode },
    configz: configz({ mode }),
    addresses: addresses("192.168.4.11", ["10.0.0.5"]),
    sysctls: { values: [{ name: "net.netfilter.nf_conntrack_tcp_be_liberal", value: "1" }] },
    iptables: { backends: [iptablesBackend({ policies: { "filter/INPUT": "DROP" } })] },
  });
  f.ipvs!.virtualServers.push(vs("10.0.0.5", 30080, { activeConns: 3 }));
  return f;
};
const raised = (release: string | null, mode: "ipvs" | "iptables") =>
  ids(judge(node(release, mode), new Map(), NOW)).filter((id) => NFTABLES_ONLY.includes(id));

t.test("kernel 6.8: nftables comes next, and the advice is given", async (t) => {
  t.same(raised("6.8.0-51-generic", "ipvs"), [
    "conntrack-workaround-relied-on",
    "host-firewall-needs-nodeport-range",
    "nodeport-addresses-shrink",
  ]);
  t.same(raised("6.8.0-51-generic", "iptables"), [
    "conntrack-workaround-relied-on",
    "host-firewall-needs-nodeport-range",
    "localhost-nodeports-not-measurable",
    "nodeport-addresses-shrink",
  ]);
  t.same(raised(null, "ipvs").length, 3, "kernel unread: still told");
});

t.test("kernel 5.4: iptables comes next, and no nftables-only advice is given", async (t) => {
  for (const mode of ["ipvs", "iptables"] as const) {
    const j = judge(node("5.4.0-216-generic", mode), new Map(), NOW);
    t.ok(ids(j).includes("kernel-too-old-for-nftables"), `${mode}: the kernel is named`);
    t.same(raised("5.4.0-216-generic", mode), [], `${mode}: none of ${NFTABLES_ONLY.join(", ")}`);
  }
});

t.test("foreign virtual servers on kernel 5.4 say iptables mode leaves IPVS alone", async (t) => {
  const f = node("5.4.0-216-generic", "ipvs");
  f.ipvs!.virtualServers.push(vs("10.0.0.5", 80));
  const x = judge(f, new Map(), NOW).findings.find((y) => y.id === "foreign-ipvs-virtual-servers");
  t.match(x?.remedy, /next mode is iptables, which leaves IPVS alone/);
  const g = node("6.8.0-51-generic", "ipvs");
  g.ipvs!.virtualServers.push(vs("10.0.0.5", 80));
  const z = judge(g, new Map(), NOW).findings.find((y) => y.id === "foreign-ipvs-virtual-servers");
  t.ok(z, "kernel 6.8: raised too");
  t.notMatch(z?.remedy, /next mode is iptables/);
});
