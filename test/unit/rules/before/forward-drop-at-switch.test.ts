import t from "tap";
import { ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";
import { iptablesBackend, vs } from "../../../helpers/facts.js";
import type { NodeFacts } from "../../../../agent/report/schema.js";
import { partialFailure, unreadParts } from "../../../../agent/facts/unread.js";

// ipvs mode DNATs in INPUT (the Service IP is local on kube-ipvs0) and its own KUBE-FORWARD accepts
// masquerade-marked and established traffic (pkg/proxy/ipvs/proxier.go v1.34.4, "this allows NodePort
// traffic to be forwarded even if the default FORWARD policy is not accept"); nftables mode DNATs in
// prerouting and writes nothing into iptables' FORWARD (pkg/proxy/nftables/proxier.go v1.34.4
// nftablesBaseChains: its filter-forward chain only rejects). New NodePort / externalIP flows to a remote
// endpoint are then forwarded, and a FORWARD policy DROP no network plugin's accept covers drops them.
//
// Expected per profile (test/profiles/profiles.md), written before the rule:
// - P1 kubeadm + Flannel + Docker (kubeadm-flannel-docker): Docker's FORWARD DROP, FLANNEL-FWD accepts the
//   pod network -> silent, `ready` before, `leftovers` after (unchanged).
// - P1 kubeadm + Calico, kops-calico, rke2-canal: no FORWARD DROP there -> silent. cali-FORWARD itself does
//   not cover the flow (felix/rules/static.go): with Docker's DROP beside it, a warning (kubeadm-calico-dock).
// - P6 k3s (Flannel + kube-router netpol): FLANNEL-FWD, KUBE-ROUTER-FORWARD -> silent.
// - Cilium with kube-proxy: CILIUM_FORWARD -> silent. EKS/AKS/GKE/OpenShift/Talos profiles: no FORWARD
//   DROP in their rulesets -> silent.
// - A node with Docker and a bare bridge CNI (no plugin FORWARD chain), or a host firewall whose forward
//   hook drops: before the switch a warning (`attention`: the switch is safe only once forwarded pod
//   traffic is accepted), after it an error while kube-proxy programs Services with endpoints (NodePort
//   traffic to remote endpoints is being dropped now), a warning while it programs none.

const DOCKER = ["DOCKER", "DOCKER-USER", "DOCKER-FORWARD"];
// Every current ipvs node has kube-proxy's KUBE-IPVS-FILTER; without it another finding (Service IPs that
// stop answering host ports) would speak, and these cases are about FORWARD alone.
const IPVS_FILTER = {
  table: "filter",
  name: "KUBE-IPVS-FILTER",
  rules: 6,
  owner: "kube-proxy-ipvs" as const,
};
// undefined: a backend from an older agent, which did not list FORWARD's jumps.
const dockerDrop = (forwardJumps: string[] | undefined, over = {}) => {
  const b = iptablesBackend({
    policies: { "filter/FORWARD": "DROP" },
    dockerChains: DOCKER,
    kubeChains: [IPVS_FILTER],
    ...over,
  });
  if (b.read && forwardJumps === undefined) delete b.forwardJumps;
  else if (b.read && forwardJumps !== undefined) b.forwardJumps = forwardJumps;
  return b;
};
const node = (...backends: ReturnType<typeof iptablesBackend>[]) => ipvsNode({ iptables: { backends } });
const finding = (f: NodeFacts, id = "forward-drop-at-switch") =>
  judge(f, new Map(), NOW).findings.find((x) => x.id === id);

t.test(
  "Docker's FORWARD DROP with no plugin accept: a warning before the switch, the drop named",
  async (t) => {
    const j = judge(node(dockerDrop(["DOCKER-USER", "DOCKER-FORWARD"])), new Map(), NOW);
    const f = j.findings.find((x) => x.id === "forward-drop-at-switch");
    t.equal(f?.severity, "warning");
    t.equal(f?.stage, "before");
    t.match(f?.evidence.drops, [
      /^ipv4 nft filter\/FORWARD policy DROP \(Docker's.*DOCKER-USER \(.*DOCKER-FORWARD \(/,
    ]);
    t.equal(j.verdict, "attention", "not ready: the switch is not yet safe");
    t.notOk(
      ids(j).includes("host-firewall-needs-nodeport-range"),
      "no NodePort range to open in Docker's DROP",
    );
  },
);

t.test("a network plugin's FORWARD accept covers pod traffic: silent, the cover said", async (t) => {
  for (const chain of ["FLANNEL-FWD", "CILIUM_FORWARD"]) {
    const j = judge(node(dockerDrop(["DOCKER-USER", "DOCKER-FORWARD", chain])), new Map(), NOW);
    t.notOk(ids(j).includes("forward-drop-at-switch"), `${chain} accepts forwarded pod traffic`);
    t.equal(j.verdict, "ready");
  }
});

t.test("an unconditional FORWARD accept (k/k#39823's workaround) makes the DROP moot", async (t) => {
  t.notOk(finding(node(dockerDrop(["DOCKER-USER", "ACCEPT (every packet)"]))));
  t.ok(finding(node(dockerDrop(["DOCKER-USER", "ACCEPT"]))), "a conditional ACCEPT is not enough");
});

t.test("accepts that never cover uplink-to-remote-pod traffic do not count", async (t) => {
  // kube-proxy's own KUBE-FORWARD goes with ipvs mode; Calico's cali-FORWARD accepts -i/-o cali+ only and
  // kube-router's KUBE-ROUTER-FORWARD only its local pods' marked traffic (their rules in
  // test/fixtures/netfilter/sources/): a NodePort flow from the uplink to a pod on another node passes neither.
  for (const chain of ["KUBE-FORWARD", "cali-FORWARD", "KUBE-ROUTER-FORWARD"]) {
    const f = finding(node(dockerDrop([chain, "DOCKER-USER"])));
    t.match(f?.evidence.drops, [new RegExp(`FORWARD jumps to: ${chain} \\(`)], `${chain}: said, not counted`);
  }
});

t.test("FORWARD ACCEPT, or DROP in a family with no Services: silent", async (t) => {
  t.notOk(finding(node(iptablesBackend({ policies: { "filter/FORWARD": "ACCEPT" }, forwardJumps: [] }))));
  const v6 = node(
    iptablesBackend({ family: "ipv6", policies: { "filter/FORWARD": "DROP" }, forwardJumps: [] }),
  );
  t.notOk(finding(v6), "an IPv4-only node's ip6tables DROP meets no Service traffic");
  v6.ipvs!.virtualServers.push(vs("fd00:10:96::1", 443));
  v6.kubeIpvs0!.addresses.push({ family: "inet6", address: "fd00:10:96::1", prefixLen: 128 });
  t.ok(finding(v6), "with IPv6 Services it does");
});

t.test("an nftables forward hook with policy drop: no iptables accept covers it", async (t) => {
  const f = node(iptablesBackend({ policies: {}, forwardJumps: ["FLANNEL-FWD"] }));
  f.nftables = {
    tables: [{ family: "inet", name: "filter", owner: "host-firewall" }],
    kubeProxyTableName: "kube-proxy",
    kubeProxy: [],
    firewalls: [
      { family: "inet", name: "filter", kind: "host-firewall", hooks: ["input:accept", "forward:drop"] },
    ],
  };
  t.match(finding(f)?.evidence.drops, ["nft table inet filter (host-firewall): forward hook policy drop"]);
});

t.test("unread is never absent", async (t) => {
  const older = finding(node(dockerDrop(undefined)));
  t.match(
    older?.evidence.drops,
    [/FORWARD's jumps not read/],
    "an older agent's backend: coverage unknown, told",
  );
  const unread = node(iptablesBackend({ forwardJumps: [] }), {
    backend: "legacy",
    family: "ipv4",
    read: false,
    why: { kind: "missing-tool", message: "no iptables-legacy-save" },
  });
  // As the scan reports it (assemble/report.ts): an unread backend fails the iptables probe.
  const j = judge(unread, new Map([["iptables", partialFailure(unreadParts(unread))!]]), NOW);
  t.notOk(ids(j).includes("forward-drop-at-switch"), "nothing claimed over an unread backend");
  t.not(j.verdict, "ready", "and the node is not called ready over it");
  // nftables not read (its fact null, the probe failed): its forward hooks are unknown, so an iptables
  // drop seen is still said, and a node with none is not ready.
  const noNft = (f: NodeFacts): NodeFacts => ({ ...f, nftables: null });
  const failed = new Map([["nftables", { kind: "missing-tool" as const, message: "no nft" }]]);
  t.ok(
    judge(noNft(node(dockerDrop([]))), failed, NOW).findings.some((x) => x.id === "forward-drop-at-switch"),
  );
  const nftUnread = judge(noNft(node(iptablesBackend({ forwardJumps: [] }))), failed, NOW);
  t.notOk(ids(nftUnread).includes("forward-drop-at-switch"));
  t.not(nftUnread.verdict, "ready");
});

t.test("only kube-proxy's own answer says ipvs mode runs", async (t) => {
  const f = node(dockerDrop([]));
  t.notOk(finding({ ...f, proxyMode: null }), "silent on a guessed phase");
});
