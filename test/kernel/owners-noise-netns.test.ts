import t from "tap";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { NetNs, netnsAvailable, withNetns } from "../helpers/netns.js";
import { finding, findingIds, parseScanOutput } from "../helpers/scan-report.js";
import { AGENT_CLI, scanInNetns } from "../helpers/standin.js";
import { REPO_ROOT } from "../helpers/uml.js";

// Other owners and noise, on the host kernel: a k3s-like node (kube-proxy in ipvs mode, kube-router's
// network-policy controller as k3s embeds it, Flannel, Docker, NodeLocal DNSCache, kube-proxy's own
// conntrack.tcpBeLiberal), every ruleset built from the plugin's own source (the fixtures' headers and
// test/fixtures/netfilter/README.md cite it), loaded for real; kube-proxy's endpoints are the stand-in.
// Expected verdicts: test/profiles/profiles.md (P6 k3s, "Plugins").

const src = (f: string) => readFileSync(join(REPO_ROOT, "test/fixtures/netfilter/sources", f), "utf8");

const IPVS = {
  mode: "ipvs",
  version: "v1.33.4",
  lastSync: { agoSeconds: 3 },
  healthy: true,
  config: { conntrackTcpBeLiberal: true, clusterCIDRs: ["10.42.0.0/16"] },
};

if (!netnsAvailable()) {
  t.fail("network namespaces are not available: these scenarios need root (CI runs as root)");
} else {
  t.test("k3s-like ipvs node with kube-router netpol, Flannel, Docker, NodeLocal DNS: ready, no noise", (t) =>
    withNetns(async (ns) => {
      k3sNode(ns);
      const r = await scanInNetns(ns, IPVS, ["--node-ip", "192.0.2.10"], "k3s-like");
      t.equal(r.phase, "ipvs");
      t.equal(r.phaseSource, "proxyMode");
      t.same(
        findingIds(r),
        ["ipvs-mode-deprecated"],
        "no foreign-chain, NodePort-address, firewall or conntrack noise",
      );
      t.equal(r.verdict, "ready");

      // Point 4: kube-router's chains are seen (they start with KUBE-) and are nobody's leftovers.
      const b = r.facts.iptables?.backends.find((x) => x.backend === "nft" && x.family === "ipv4");
      if (!b?.read) return t.fail("ipv4 nft backend not read");
      const routers = b.kubeChains.filter((c) => /^KUBE-(ROUTER|NWPLCY|POD-FW)-/.test(c.name));
      t.equal(routers.length, 8, "all eight kube-router chains read");
      t.ok(
        routers.every((c) => c.owner === "unknown"),
        "none of them kube-proxy's or kubelet's",
      );
      t.same(
        b.foreignJumps,
        [],
        "FORWARD -> KUBE-ROUTER-FORWARD and KUBE-POD-FW-* jumps are not references to kube-proxy",
      );
      t.same(
        b.foreignSetMatches,
        [],
        "KUBE-SRC-*/KUBE-DST-* matches are kube-router's sets, not kube-proxy's",
      );
      const sets = r.facts.ipsets?.sets ?? [];
      t.same(
        sets
          .filter((s) => !s.kubeProxy)
          .map((s) => s.name)
          .sort(),
        ["KUBE-DST-VQ3N7PSJ4XKOHR2L", "KUBE-SRC-J2JLXWMHRQG4ZLAD", "kube-router-local-pods"],
      );
      t.same(r.mixed, [], "nothing of kube-router's counted as another mode's state");

      // Point 6: what was filtered is still said, with why.
      const seen = (r.view?.notCounted ?? []).map((n) => `${n.check} ${n.seen}`);
      for (const s of [
        "nodeport-addresses-shrink 10.42.0.1 (cni0)",
        "nodeport-addresses-shrink 10.42.0.0 (flannel.1)",
        "nodeport-addresses-shrink 172.17.0.1 (docker0)",
        "nodeport-addresses-shrink 169.254.20.10 (nodelocaldns)",
        "host-firewall-needs-nodeport-range ipv4 nft filter/FORWARD policy DROP",
        "conntrack-workaround-relied-on net.netfilter.nf_conntrack_tcp_be_liberal = 1",
      ])
        t.ok(seen.includes(s), `not counted, and said: ${s}`);
      t.equal(r.view?.notCounted?.length, 6, "exactly those, each with why");
      t.ok(
        (r.view?.notCounted ?? []).every((n) => n.why.length > 20),
        "each says why",
      );
    }),
  );

  // The same node, and what still must fire: a rule of someone else's matching kube-proxy's ipset, an
  // address on a plain second NIC, a FORWARD DROP that is not Docker's, be_liberal kube-proxy does not set.
  t.test("the same node with real work to do: each check still fires, noise still filtered", (t) =>
    withNetns(async (ns) => {
      k3sNode(ns, { docker: false });
      ns.iptablesRestore(src("foreign-set-match.rules"), "nft", "ipv4");
      ns.must(["ip", "link", "add", "eth1", "type", "veth", "peer", "name", "eth1p"]);
      ns.must(["ip", "addr", "add", "198.51.100.7/24", "dev", "eth1"]);
      ns.must(["ip", "link", "set", "eth1", "up"]);
      ns.must(["iptables-nft", "-P", "FORWARD", "DROP"]);
      const r = await scanInNetns(
        ns,
        { ...IPVS, config: { clusterCIDRs: ["10.42.0.0/16"] } },
        ["--node-ip", "192.0.2.10"],
        "k3s-like",
      );
      t.same(findingIds(r), [
        "conntrack-workaround-relied-on",
        "foreign-rules-reference-kube-chains",
        "host-firewall-needs-nodeport-range",
        "ipvs-mode-deprecated",
        "nodeport-addresses-shrink",
      ]);
      t.equal(r.verdict, "attention");
      const refs = finding(r, "foreign-rules-reference-kube-chains")?.evidence;
      t.same(refs?.setMatches, [
        "ipv4 nft filter/MY-ALLOW matches ipset KUBE-CLUSTER-IP: -A MY-ALLOW -p tcp -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT",
      ]);
      t.same(refs?.rules, [], "no jump into kube-proxy's chains; kube-router's jumps are not listed");
      const shrink = finding(r, "nodeport-addresses-shrink")?.evidence;
      t.same(shrink?.secondaryAddresses, ["198.51.100.7 (eth1)"], "only the second NIC counts");
      t.equal((shrink?.notCounted as string[]).length, 3, "cni0, flannel.1, nodelocaldns: seen, not counted");
      t.same(finding(r, "host-firewall-needs-nodeport-range")?.evidence.firewall, [
        "ipv4 nft filter/FORWARD policy DROP",
      ]);
    }),
  );
  // P6 after the switch: kube-router's chains and sets stay, and are nobody's leftovers or foreign references.
  t.test("k3s-like node after the switch to nftables, kube-router's state still there: clean", (t) =>
    withNetns(async (ns) => {
      ns.must(["ip", "link", "set", "lo", "up"]);
      ns.loadNft(src("kube-proxy-nft-v1.34-ip.nft"));
      ns.loadNft(src("kube-proxy-nft-v1.33-ip6.nft"));
      ns.ipsetRestore(src("kube-router-netpol.ipset"));
      for (const f of ["kubelet", "kube-router-netpol", "flannel"])
        ns.iptablesRestore(src(`${f}.rules`), "nft", "ipv4");
      const r = await scanInNetns(
        ns,
        { mode: "nftables", version: "v1.35.4", lastSync: { agoSeconds: 3 }, healthy: true },
        [],
        "k3s-like",
      );
      t.equal(r.phase, "nftables");
      t.same(findingIds(r), [], "no foreign-chain warning for kube-router's jumps, no leftovers");
      t.equal(r.verdict, "clean");
    }),
  );

  // kube-proxy silent and none of its state here: kube-router's KUBE-* chains and sets are no ipvs evidence.
  t.test("kube-router netpol state only, kube-proxy silent: no kube-proxy phase is guessed from it", (t) =>
    withNetns(async (ns) => {
      ns.must(["ip", "link", "set", "lo", "up"]);
      ns.ipsetRestore(src("kube-router-netpol.ipset"));
      for (const f of ["kubelet", "kube-router-netpol", "flannel"])
        ns.iptablesRestore(src(`${f}.rules`), "nft", "ipv4");
      const out = ns.runNode(AGENT_CLI, ["scan", "--json", "--node", "router-only"]);
      t.equal(out.code, 0, out.stderr);
      const r = parseScanOutput(out.stdout);
      t.equal(r.phase, "none");
      t.same(r.mixed, []);
      t.same(findingIds(r), ["kube-proxy-free"]);
    }),
  );
}

/** kubelet + kube-proxy ipvs mode + kube-router netpol + Flannel (+ Docker), with their links and addresses. */
function k3sNode(ns: NetNs, o: { docker?: boolean } = {}): void {
  ns.must(["ip", "link", "set", "lo", "up"]);
  ns.must(["ip", "link", "add", "eth0", "type", "veth", "peer", "name", "eth0p"]);
  ns.must(["ip", "addr", "add", "192.0.2.10/24", "dev", "eth0"]);
  ns.must(["ip", "link", "set", "eth0", "up"]);
  // Flannel's vxlan device (flannel.<VNI>, port 8472 as flannel's vxlan backend defaults) and the bridge
  // CNI's cni0 holding this node's pod gateway.
  ns.must(["ip", "link", "add", "flannel.1", "type", "vxlan", "id", "1", "dstport", "8472", "nolearning"]);
  ns.must(["ip", "addr", "add", "10.42.0.0/32", "dev", "flannel.1"]);
  ns.must(["ip", "link", "add", "cni0", "type", "bridge"]);
  ns.must(["ip", "addr", "add", "10.42.0.1/24", "dev", "cni0"]);
  // node-cache makes a dummy; this host kernel has no dummy links, so a veth of the same name stands in
  // (the check decides by name, as node-cache's -interfacename is what names it).
  ns.must(["ip", "link", "add", "nodelocaldns", "type", "veth", "peer", "name", "nldp"]);
  ns.must(["ip", "addr", "add", "169.254.20.10/32", "dev", "nodelocaldns"]);
  ns.ipsetRestore(src("ipvs-mode.ipset"));
  ns.ipsetRestore(src("kube-router-netpol.ipset"));
  ns.iptablesRestore(src("kubelet.rules"), "nft", "ipv4");
  ns.iptablesRestore(src("kube-proxy-ipvs-mode.rules"), "nft", "ipv4");
  ns.iptablesRestore(src("kube-router-netpol.rules"), "nft", "ipv4");
  ns.iptablesRestore(src("flannel.rules"), "nft", "ipv4");
  if (o.docker !== false) {
    ns.must(["ip", "link", "add", "docker0", "type", "bridge"]);
    ns.must(["ip", "addr", "add", "172.17.0.1/16", "dev", "docker0"]);
    ns.iptablesRestore(src("docker.rules"), "nft", "ipv4");
  }
  // conntrack is loaded by the rules above; the sysctl is per namespace.
  ns.must(["sysctl", "-qw", "net.netfilter.nf_conntrack_tcp_be_liberal=1"]);
}
