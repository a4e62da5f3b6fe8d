import t from "tap";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { finding, findingIds, parseScanOutput } from "../helpers/scan-report.js";
import { bootUml, hostScratchDir, REPO_ROOT, umlRunsHere, umlUnavailableReason } from "../helpers/uml.js";

// A loaded 2-core machine (load 8-17) slows a UML guest several times over: its deadline and this
// file's (tap's default is 600 s) leave room for that; a guest that hangs is still killed.
t.setTimeout(1_200_000);

// Issue 2's scenarios that need a kernel with IPVS and dummy links: one User-Mode Linux boot (kernel
// 6.1), one network namespace per node. Real IPVS virtual servers, a real kube-ipvs0, real ipsets and
// iptables-legacy chains; kube-proxy's endpoints answered by the stand-in inside the same namespace;
// the built agent CLI scans from inside it. (UML's nftables has no ip family: no kube-proxy table here.)

const src = (f: string) => join(REPO_ROOT, "test/fixtures/netfilter/sources", f);
const scenario = (f: string) =>
  JSON.parse(readFileSync(join(REPO_ROOT, "test/fixtures/kube-proxy/scenarios", f), "utf8"));
const fixed = { metricsAddress: "127.0.0.1:10249", healthAddress: "127.0.0.1:10256" };

const GUEST = `
set -eu
. test/helpers/uml/guest-lib.sh

# scan NODE: start the stand-in in namespace NODE with $OUT/NODE-kube-proxy.json, scan, stop it.
scan() {
  ip netns exec "$1" node dist/test/standins/kube-proxy.js "$OUT/$1-kube-proxy.json" > "$OUT/$1-standin.out" 2>&1 &
  pid=$!
  # Ready by its own signal (the 'ready' line) or its exit, never by a count of tries: a loaded host is slow.
  until grep -q '^ready' "$OUT/$1-standin.out"; do
    kill -0 $pid 2>/dev/null || { echo "stand-in for $1 exited before it got ready"; cat "$OUT/$1-standin.out"; exit 1; }
    sleep 0.2
  done
  shift_node=$1; shift
  # Unhurried deadlines: nothing here hangs, and a guest on a loaded host missed the default 10 s reads
  # (a probe that times out turns the verdict into scan-incomplete).
  ip netns exec "$shift_node" node dist/agent/cli.js scan --json --node "$shift_node" \
    --call-timeout-ms 60000 --probe-timeout-ms 120000 "$@" > "$OUT/$shift_node.json" || true
  kill $pid; wait $pid 2>/dev/null || true
}

cluster_ips() {
  ip -n "$1" link add kube-ipvs0 type dummy
  for a in 10.96.0.1 10.96.0.10; do ip -n "$1" addr add $a/32 dev kube-ipvs0; done
  ip -n "$1" -6 addr add fd00:10:96::1/128 dev kube-ipvs0 nodad
}

leftover_state() {
  ip netns exec "$1" ipset restore < ${src("ipvs-mode.ipset")}
  ip netns exec "$1" iptables-legacy-restore --noflush < ${src("kubelet.rules")}
  ip netns exec "$1" iptables-legacy-restore --noflush < ${src("kube-proxy-ipvs-mode.rules")}
}

# --- a node in ipvs mode, as kube-proxy leaves it --------------------------------------------------
proxyscope_netns ipvs-node
ip -n ipvs-node link add eth0 type dummy
ip -n ipvs-node addr add 172.18.0.10/16 dev eth0
ip -n ipvs-node link set eth0 up
cluster_ips ipvs-node
in1() { ip netns exec ipvs-node "$@"; }
in1 ipvsadm -A -t 10.96.0.1:443 -s rr
for rs in 172.18.0.2 172.18.0.3 172.18.0.4; do in1 ipvsadm -a -t 10.96.0.1:443 -r $rs:6443 -m -w 1; done
in1 ipvsadm -A -u 10.96.0.10:53 -s rr
for rs in 10.244.0.2 10.244.1.3; do in1 ipvsadm -a -u 10.96.0.10:53 -r $rs:53 -m -w 1; done
in1 ipvsadm -A -t [fd00:10:96::1]:443 -s rr
in1 ipvsadm -a -t [fd00:10:96::1]:443 -r [fd00:10:244:1::2]:6443 -m -w 1
in1 ipvsadm -A -t 172.18.0.10:30080 -s rr
in1 ipvsadm -a -t 172.18.0.10:30080 -r 10.244.1.5:8080 -m -w 1
in1 sysctl -qw net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2
leftover_state ipvs-node
scan ipvs-node --node-ip 172.18.0.10

# --- the same node after the switch: kube-ipvs0 still holds the ClusterIPs, IPVS is empty ----------
proxyscope_netns switched-node
cluster_ips switched-node
leftover_state switched-node
scan switched-node

# --- ipvs mode with a keepalived VIP on the node: nftables mode would flush it ----------------------
proxyscope_netns keepalived-node
ip -n keepalived-node link add eth0 type dummy
ip -n keepalived-node addr add 172.18.0.11/16 dev eth0
ip -n keepalived-node addr add 172.18.0.100/32 dev eth0
ip -n keepalived-node link set eth0 up
cluster_ips keepalived-node
in3() { ip netns exec keepalived-node "$@"; }
in3 ipvsadm -A -t 10.96.0.1:443 -s rr
in3 ipvsadm -a -t 10.96.0.1:443 -r 172.18.0.2:6443 -m -w 1
in3 ipvsadm -A -u 10.96.0.10:53 -s rr
in3 ipvsadm -A -t [fd00:10:96::1]:443 -s rr
in3 ipvsadm -A -t 172.18.0.100:80 -s wlc
in3 ipvsadm -a -t 172.18.0.100:80 -r 172.18.0.21:80 -g -w 100
scan keepalived-node --node-ip 172.18.0.11
echo guest done
`;

const reason = umlUnavailableReason();
if (reason !== null) {
  t.fail(`User-Mode Linux is needed for these scenarios and does not skip silently: ${reason}`);
} else if (umlRunsHere(t)) {
  const out = hostScratchDir("proxyscope-scenarios-uml-");
  t.teardown(out.remove);
  const ipvs = { ...scenario("ipvs-v1.31.json"), ...fixed };
  writeFileSync(join(out.path, "ipvs-node-kube-proxy.json"), JSON.stringify(ipvs));
  writeFileSync(join(out.path, "keepalived-node-kube-proxy.json"), JSON.stringify(ipvs));
  writeFileSync(
    join(out.path, "switched-node-kube-proxy.json"),
    JSON.stringify({
      mode: "nftables",
      version: "v1.35.4",
      lastSync: { agoSeconds: 3 },
      healthy: true,
      ...fixed,
    }),
  );
  const boot = await bootUml({ script: GUEST, env: { OUT: out.path }, timeoutMs: 900_000, memMb: 768 });
  t.equal(boot.exitCode, 0, `guest script:\n${boot.output}`);
  const read = (n: string) => parseScanOutput(readFileSync(join(out.path, `${n}.json`), "utf8"));

  t.test(
    "ipvs mode: real virtual servers, kube-ipvs0 holding the ClusterIPs, ipsets, legacy chains",
    async (t) => {
      const r = read("ipvs-node");
      t.equal(r.phase, "ipvs");
      t.equal(r.phaseSource, "proxyMode");
      t.equal(r.verdict, "ready");
      t.same(findingIds(r), ["ipvs-mode-deprecated", "ipvs-scheduler-not-rr", "ipvs-timeouts-set"]);
      t.same(finding(r, "ipvs-scheduler-not-rr")?.evidence.configured, "lc");
      t.equal(finding(r, "ipvs-timeouts-set")?.evidence.tcpTimeout, "15m0s");
      t.equal(r.facts.ipvs?.virtualServerCount, 4);
      t.equal(r.facts.ipvs?.realServerCount, 7);
      t.same(r.facts.kubeIpvs0?.addresses.map((a) => a.address).sort(), [
        "10.96.0.1",
        "10.96.0.10",
        "fd00:10:96::1",
      ]);
      t.equal(r.facts.ipsets?.sets.filter((s) => s.kubeProxy).length, 8);
      const legacy = r.facts.iptables?.backends.find((b) => b.backend === "legacy" && b.family === "ipv4");
      t.ok(
        legacy?.read &&
          legacy.kubeChains.some((c) => c.name === "KUBE-NODE-PORT" && c.owner === "kube-proxy-ipvs"),
      );
      t.same(r.mixed, []);
    },
  );

  t.test("after the switch: kube-ipvs0 black-holes every ClusterIP it still holds", async (t) => {
    const r = read("switched-node");
    t.equal(r.phase, "nftables");
    t.equal(r.verdict, "unhealthy");
    const ids = findingIds(r);
    t.ok(ids.includes("kube-ipvs0-black-hole"));
    t.same(finding(r, "kube-ipvs0-black-hole")?.evidence.blackHoled, [
      "10.96.0.1",
      "10.96.0.10",
      "fd00:10:96::1",
    ]);
    t.equal(finding(r, "kube-ipvs0-black-hole")?.evidence.blackHoledCount, 3);
    t.equal(finding(r, "kube-ipvs0-black-hole")?.severity, "critical");
    t.ok(ids.includes("kube-ipsets-left"));
    t.ok(ids.includes("ipvs-iptables-chains-left"));
    // UML's nftables cannot hold a table of the ip family, so kube-proxy's table is missing here — and
    // the agent must say so rather than call the node clean. Nothing else may appear.
    t.equal(r.probes.find((p) => p.name === "nftables")?.ok, true, "nft reads the (empty) ruleset");
    t.same(ids, [
      "ipvs-iptables-chains-left",
      "kube-ipsets-left",
      "kube-ipvs0-black-hole",
      "nftables-table-missing",
    ]);
  });

  t.test("a keepalived VIP in IPVS is named as a foreign user that nftables mode would flush", async (t) => {
    const r = read("keepalived-node");
    t.equal(r.phase, "ipvs");
    t.equal(r.verdict, "blocked");
    t.same(finding(r, "foreign-ipvs-virtual-servers")?.evidence.virtualServers, ["TCP 172.18.0.100:80"]);
    t.same(findingIds(r), [
      "foreign-ipvs-virtual-servers",
      "ipvs-mode-deprecated",
      "ipvs-scheduler-not-rr",
      "ipvs-timeouts-set",
      "nodeport-addresses-shrink",
      // This node is given no kube-proxy iptables rules, so no KUBE-IPVS-FILTER: its Service IPs on
      // kube-ipvs0 answer every port, which nftables mode would stop.
      "service-ips-host-ports-close",
    ]);
    t.same(finding(r, "nodeport-addresses-shrink")?.evidence.secondaryAddresses, ["172.18.0.100 (eth0)"]);
    t.match(finding(r, "service-ips-host-ports-close")?.evidence.kubeIpvsFilter, /^absent \(/);
  });
}
