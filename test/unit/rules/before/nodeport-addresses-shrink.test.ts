import t from "tap";
import { addresses, ids, ipvsNode, judge, kernel, NOW } from "../../../helpers/rules.js";
import { configz, vs } from "../../../helpers/facts.js";

t.test("NodePorts with traffic on a secondary address are an error; without traffic a warning", async (t) => {
  const f = ipvsNode({ addresses: addresses("192.168.4.11", ["10.0.0.5"]) });
  f.ipvs!.virtualServers.push(
    vs("10.0.0.5", 30080, { activeConns: 3 }),
    vs("192.168.4.11", 30080, { activeConns: 9 }),
  );
  const j = judge(f, new Map(), NOW);
  const x = j.findings.find((y) => y.id === "nodeport-addresses-shrink");
  t.equal(x?.severity, "error");
  t.same(x?.evidence.withConnections, ["TCP 10.0.0.5:30080 (3 active, 0 inactive)"]);
  const quiet = ipvsNode({ addresses: addresses("192.168.4.11", ["10.0.0.5"]) });
  t.equal(
    judge(quiet, new Map(), NOW).findings.find((y) => y.id === "nodeport-addresses-shrink")?.severity,
    "warning",
  );
  const pinned = ipvsNode({
    addresses: addresses("192.168.4.11", ["10.0.0.5"]),
    configz: configz({ nodePortAddresses: ["192.168.4.0/24"] }),
  });
  t.notOk(ids(judge(pinned, new Map(), NOW)).includes("nodeport-addresses-shrink"));
});

// The pod network's, Docker's, kube-router's and NodeLocal DNSCache's addresses are no NodePort
// destination (each plugin's own interface name; agent/view/not-counted.ts cites them).
const withIfs = (ifs: { name: string; kind: string | null; address: string }[]) => {
  const a = addresses("192.168.4.11");
  for (const i of ifs)
    a.interfaces.push({
      name: i.name,
      kind: i.kind,
      operState: "UP",
      addresses: [{ family: "inet", address: i.address, prefixLen: 32, scope: "global" }],
    });
  return a;
};
const NOISE = [
  { name: "cni0", kind: "bridge", address: "10.244.1.1" },
  { name: "flannel.1", kind: "vxlan", address: "10.244.1.0" },
  { name: "docker0", kind: "bridge", address: "172.17.0.1" },
  { name: "br-0123456789ab", kind: "bridge", address: "172.18.0.1" },
  { name: "vxlan.calico", kind: "vxlan", address: "10.244.2.0" },
  { name: "tunl0", kind: "ipip", address: "10.244.3.0" },
  { name: "cilium_host", kind: "veth", address: "10.0.1.17" },
  { name: "kube-dummy-if", kind: "dummy", address: "10.96.0.1" },
  { name: "kube-bridge", kind: "bridge", address: "10.244.4.1" },
  { name: "nodelocaldns", kind: "dummy", address: "169.254.20.10" },
  { name: "eth0", kind: null, address: "169.254.169.254" },
];

t.test("CNI, Docker, kube-router and DNS-cache addresses are seen, not counted", async (t) => {
  const j = judge(ipvsNode({ addresses: withIfs(NOISE) }), new Map(), NOW);
  t.notOk(ids(j).includes("nodeport-addresses-shrink"), "nothing a NodePort client uses");
  const noted = j.view.notCounted.filter((n) => n.check === "nodeport-addresses-shrink");
  t.equal(noted.length, NOISE.length, "each one said, with why");
  t.match(noted.find((n) => n.seen === "10.244.1.1 (cni0)")?.why, /pod bridge/);
  t.match(noted.find((n) => n.seen === "169.254.169.254 (eth0)")?.why, /link-local/);
});

t.test("a second NIC still counts beside the noise; noise with NodePort traffic counts too", async (t) => {
  const f = ipvsNode({
    addresses: withIfs([...NOISE, { name: "eth1", kind: null, address: "198.51.100.7" }]),
  });
  f.ipvs!.virtualServers.push(vs("10.244.1.1", 30080, { activeConns: 2 }));
  const x = judge(f, new Map(), NOW).findings.find((y) => y.id === "nodeport-addresses-shrink");
  t.equal(x?.severity, "error", "traffic on the cni0 address says someone uses it");
  t.same(x?.evidence.secondaryAddresses, ["10.244.1.1 (cni0)", "198.51.100.7 (eth1)"]);
  t.equal((x?.evidence.notCounted as string[]).length, NOISE.length - 1);
  t.same(x?.evidence.withConnections, ["TCP 10.244.1.1:30080 (2 active, 0 inactive)"]);
});

// A node below kernel 5.13 goes to iptables mode, not nftables (kernel-too-old-for-nftables), and iptables
// mode keeps NodePorts on every local address: only nftables mode defaults nodePortAddresses to primary
// (cmd/kube-proxy/app/server_linux.go platformApplyDefaults). Expected before the rule changed: no advice.
t.test(
  "a kernel below 5.13 (its next mode is iptables) is told nothing about nftables' NodePort reach",
  async (t) => {
    const old = ipvsNode({
      addresses: addresses("192.168.4.11", ["10.0.0.5"]),
      kernel: kernel("5.4.0-216-generic"),
    });
    old.ipvs!.virtualServers.push(vs("10.0.0.5", 30080, { activeConns: 3 }));
    const j = judge(old, new Map(), NOW);
    t.ok(ids(j).includes("kernel-too-old-for-nftables"));
    t.notOk(ids(j).includes("nodeport-addresses-shrink"));
    const unknown = ipvsNode({ addresses: addresses("192.168.4.11", ["10.0.0.5"]), kernel: null });
    unknown.ipvs!.virtualServers.push(vs("10.0.0.5", 30080, { activeConns: 3 }));
    t.ok(
      ids(judge(unknown, new Map(), NOW)).includes("nodeport-addresses-shrink"),
      "kernel unread: still told",
    );
  },
);
