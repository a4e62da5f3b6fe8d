import t from "tap";
import { serviceConntrackProbe } from "../../../agent/probes/service-conntrack.js";
import { ServiceConntrackFacts } from "../../../agent/facts/service-conntrack.js";
import type { ProbeName } from "../../../agent/facts/sources.js";
import type { ProbeOutcome } from "../../../agent/facts/sources.js";
import { probeContext, tree } from "../../helpers/probe-context.js";
import { addresses, ipvsNode } from "../../helpers/rules.js";
import { configz } from "../../helpers/facts.js";

// One read of /proc/net/nf_conntrack in the kernel's format (nf_conntrack_standalone.c ct_seq_show;
// ICMP prints type/code/id instead of ports). The node 192.168.4.11 has Service IPs 10.96.0.1 (TCP 443
// served) and 10.96.0.10 (UDP 53 served) on kube-ipvs0, and an ETP Local LB IP 203.0.113.10:443 and Local
// NodePort TCP 30443; pods are 10.244.0.0/16.
const CT = [
  // A pod calling the ETP Local LB IP, twice; the host calling the Local NodePort on its own address.
  "ipv4     2 tcp      6 86399 ESTABLISHED src=10.244.1.7 dst=203.0.113.10 sport=40001 dport=443 src=10.244.1.9 dst=10.244.1.7 sport=8443 dport=40001 [ASSURED] mark=0 zone=0 use=2",
  "ipv4     2 tcp      6 86399 ESTABLISHED src=10.244.1.7 dst=203.0.113.10 sport=40002 dport=443 src=10.244.1.9 dst=10.244.1.7 sport=8443 dport=40002 [ASSURED] mark=0 zone=0 use=2",
  "ipv4     2 tcp      6 86399 ESTABLISHED src=192.168.4.11 dst=192.168.4.11 sport=40003 dport=30443 src=10.244.1.9 dst=192.168.4.11 sport=8443 dport=40003 [ASSURED] mark=0 zone=0 use=2",
  // An outside client of the same LB IP: not in-cluster, not counted.
  "ipv4     2 tcp      6 86399 ESTABLISHED src=198.51.100.4 dst=203.0.113.10 sport=40004 dport=443 src=10.244.1.9 dst=198.51.100.4 sport=8443 dport=40004 [ASSURED] mark=0 zone=0 use=2",
  // A ping to a ClusterIP, ssh through a ClusterIP, and a served Service port (not counted).
  "ipv4     2 icmp     1 29 src=10.244.1.7 dst=10.96.0.10 type=8 code=0 id=77 src=10.96.0.10 dst=10.244.1.7 type=0 code=0 id=77 mark=0 zone=0 use=2",
  "ipv4     2 tcp      6 86399 ESTABLISHED src=10.244.1.7 dst=10.96.0.1 sport=40005 dport=22 src=10.96.0.1 dst=10.244.1.7 sport=22 dport=40005 [ASSURED] mark=0 zone=0 use=2",
  "ipv4     2 tcp      6 86399 ESTABLISHED src=10.244.1.7 dst=10.96.0.1 sport=40006 dport=443 src=192.168.4.10 dst=10.244.1.7 sport=6443 dport=40006 [ASSURED] mark=0 zone=0 use=2",
  "",
].join("\n");

const base = ipvsNode();
const ok = <F>(facts: F): ProbeOutcome<unknown> => ({ ok: true, facts });
function prior(over: Partial<Record<ProbeName, ProbeOutcome<unknown>>> = {}) {
  return {
    ipsets: ok({
      available: true,
      sets: [],
      etpLocal: { addresses: ["TCP 203.0.113.10:443"], nodePorts: ["TCP:30443"] },
    }),
    addresses: ok(addresses("192.168.4.11")),
    "kube-proxy-configz": ok(configz({ clusterCIDR: "10.244.0.0/16", detectLocalMode: "ClusterCIDR" })),
    "kube-ipvs0": ok(base.kubeIpvs0),
    ipvs: ok(base.ipvs),
    ...over,
  };
}
const run = (proc: string, over = {}) =>
  serviceConntrackProbe.run(probeContext({ procRoot: proc, prior: prior(over) }));

t.test("in-cluster callers of ETP Local destinations and unexplained flows to Service IPs", async (t) => {
  const r = await run(tree(t, { net: { nf_conntrack: CT } }));
  if (!r.ok) return t.fail(JSON.stringify(r.error));
  ServiceConntrackFacts.parse(r.facts);
  t.same(r.facts.etpLocalFromInside, {
    read: true,
    inside: "node addresses, clusterCIDR 10.244.0.0/16",
    to: [
      { destination: "TCP 203.0.113.10:443", connections: 2 },
      { destination: "TCP 192.168.4.11:30443", connections: 1 },
    ],
    destinations: 2,
  });
  t.same(r.facts.serviceIpsOther, {
    read: true,
    to: [
      { address: "10.96.0.1", what: "TCP :22", connections: 1 },
      { address: "10.96.0.10", what: "ICMP", connections: 1 },
    ],
    flows: 2,
  });
});

t.test("pods are not counted where kube-proxy's detector would not see them", async (t) => {
  const r = await run(tree(t, { net: { nf_conntrack: CT } }), {
    "kube-proxy-configz": ok(configz({ clusterCIDR: "", detectLocalMode: "ClusterCIDR" })),
  });
  if (!r.ok || !r.facts.etpLocalFromInside.read) return t.fail("not read");
  t.same(r.facts.etpLocalFromInside.to, [{ destination: "TCP 192.168.4.11:30443", connections: 1 }]);
  t.match(r.facts.etpLocalFromInside.inside, /no clusterCIDR/);
});

t.test("no conntrack table: both parts not read, never zero", async (t) => {
  const r = await run(tree(t, { net: {} }));
  if (!r.ok) return t.fail("the probe itself must not fail over an optional table");
  t.equal(r.facts.etpLocalFromInside.read, false);
  t.equal(r.facts.serviceIpsOther.read, false);
  t.match(!r.facts.serviceIpsOther.read && r.facts.serviceIpsOther.why, /nf_conntrack/);
});

t.test("a line that is no entry: not read, never a partial count", async (t) => {
  const r = await run(tree(t, { net: { nf_conntrack: `${CT}garbage here\n` } }));
  if (!r.ok) return t.fail("not ok");
  t.equal(r.facts.etpLocalFromInside.read, false);
  t.match(!r.facts.etpLocalFromInside.read && r.facts.etpLocalFromInside.why, /^garbage/);
});

t.test("a fact it matches against not read: that part is not read, the other still counted", async (t) => {
  const r = await run(tree(t, { net: { nf_conntrack: CT } }), {
    ipsets: ok({ available: true, sets: [], etpLocal: null }),
  });
  if (!r.ok) return t.fail("not ok");
  t.equal(r.facts.etpLocalFromInside.read, false);
  t.equal(r.facts.serviceIpsOther.read && r.facts.serviceIpsOther.flows, 2);
});
