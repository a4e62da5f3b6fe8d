import t from "tap";
import { addresses, ids, ipvsNode, judge, kernel, NOW } from "../../../helpers/rules.js";
import { configz } from "../../../helpers/facts.js";
import type { NodeFacts } from "../../../../agent/report/schema.js";

// What a careful SRE expects, written before the rule. An `externalTrafficPolicy: Local` LoadBalancer
// Service gets a healthCheckNodePort that kube-proxy's service health server listens on: on every
// address while nodePortAddresses matches all (ipvs mode, unset), only on the matched node IPs otherwise
// (pkg/proxy/healthcheck/service_health.go newServiceHealthServer), and nftables mode defaults the field
// to `primary` (cmd/kube-proxy/app/server_linux.go platformApplyDefaults).
// - Profiles with no such Service (test/profiles/profiles.md P1 kubeadm + Calico/Flannel, k3s, RKE2: the
//   corpus' ipvs nodes listen only on 10249/10256): nothing, still `ready`.
// - P2 EKS with aws-vpc-cni (secondary ENIs, the LB health-checks whatever target IP it registered) or
//   any node with a second NIC / keepalived VIP: the health-check port listens on [::] and conntrack
//   shows checks arriving on a non-primary address -> error, blocks: after the switch the LB sees
//   every node as down, an outage of every ETP-Local Service, and the fix (set nodePortAddresses) is
//   one line before the switch.
// - The same with no connection on a non-primary address (or conntrack not readable): a warning to
//   check, `attention`; conntrack unread is said as "not read", never as 0 connections.
// - Only the primary address plus CNI/Docker noise: nothing shrinks that anyone uses: nothing.
// - nodePortAddresses already set: the health server already listens where nftables mode will: nothing.
// - listeners unread: not raised, and the check reads as not read (the node is never `ready`).
type Listeners = NonNullable<NodeFacts["listeners"]>;
const listeners = (over: Partial<Listeners> = {}): Listeners => ({
  tcp: [
    { family: "inet", address: "127.0.0.1", port: 10249, kubeProxy: null },
    { family: "inet6", address: "::", port: 10256, kubeProxy: null },
    { family: "inet6", address: "::", port: 31234, kubeProxy: null },
  ],
  kubeProxyProcess: { traced: false, why: "no process this agent can see holds socket 41234" },
  healthCheckPorts: { known: true, ports: [31234], source: "ipset" },
  conntrack: { read: true, to: [{ address: "192.168.4.11", port: 31234, connections: 6 }] },
  ...over,
});
const ID = "health-check-nodeports-shrink";
const twoNics = (over = {}) => ipvsNode({ addresses: addresses("192.168.4.11", ["10.0.0.5"]), ...over });
const find = (f: NodeFacts) => judge(f, new Map(), NOW).findings.find((x) => x.id === ID);

t.test("checks arriving on a non-primary address: error, blocks", async (t) => {
  const f = twoNics({
    listeners: listeners({
      conntrack: {
        read: true,
        to: [
          { address: "192.168.4.11", port: 31234, connections: 6 },
          { address: "10.0.0.5", port: 31234, connections: 3 },
        ],
      },
    }),
  });
  const x = find(f);
  t.equal(x?.severity, "error");
  t.equal(x?.blocksMigration, true);
  t.same(x?.evidence.healthCheckNodePorts, [31234]);
  t.same(x?.evidence.listeningOnEveryAddress, ["[::]:31234"]);
  t.same(x?.evidence.connectionsOnNonPrimary, ["10.0.0.5:31234 (3 connections)"]);
  t.equal(judge(f, new Map(), NOW).verdict, "blocked");
});

t.test("listening everywhere, non-primary addresses, no use seen: a warning", async (t) => {
  const x = find(twoNics({ listeners: listeners() }));
  t.equal(x?.severity, "warning");
  t.equal(x?.blocksMigration, false);
  t.same(x?.evidence.nonPrimaryAddresses, ["10.0.0.5 (eth0)"]);
  t.same(x?.evidence.connectionsOnNonPrimary, []);
  const unread = find(
    twoNics({
      listeners: listeners({ conntrack: { read: false, why: "io: ENOENT /proc/net/nf_conntrack" } }),
    }),
  );
  t.equal(unread?.severity, "warning", "conntrack unread: not evidence of use, never 0 either");
  t.match(unread?.evidence.connectionsOnNonPrimary, /^not read: io: ENOENT/);
});

t.test("ports that cannot be told: a warning saying so, never silence", async (t) => {
  const x = find(
    twoNics({
      listeners: listeners({
        healthCheckPorts: { known: false, why: "KUBE-HEALTH-CHECK-NODE-PORT could not be listed" },
        conntrack: { read: false, why: "no health-check NodePort to count connections to" },
      }),
    }),
  );
  t.equal(x?.severity, "warning");
  t.match(x?.evidence.healthCheckNodePorts, /^not read: KUBE-HEALTH-CHECK-NODE-PORT/);
});

t.test("not raised: no health-check port, primary only, nodePortAddresses set", async (t) => {
  // The corpus' ipvs nodes: only 10249/10256 listen, the set is empty.
  const none = twoNics({
    listeners: listeners({
      healthCheckPorts: { known: true, ports: [], source: "ipset" },
      conntrack: { read: false, why: "no health-check NodePort to count connections to" },
    }),
  });
  t.notOk(ids(judge(none, new Map(), NOW)).includes(ID));
  t.equal(judge(none, new Map(), NOW).verdict, "attention", "the NodePort check alone (second NIC)");
  const primaryOnly = ipvsNode({ listeners: listeners() });
  t.notOk(ids(judge(primaryOnly, new Map(), NOW)).includes(ID));
  t.equal(judge(primaryOnly, new Map(), NOW).verdict, "ready");
  const pinned = twoNics({
    listeners: listeners(),
    configz: configz({ nodePortAddresses: ["192.168.4.0/24"] }),
  });
  t.notOk(ids(judge(pinned, new Map(), NOW)).includes(ID));
});

t.test("listening only on the primary address already: nothing shrinks", async (t) => {
  const f = twoNics({
    listeners: listeners({
      tcp: [{ family: "inet", address: "192.168.4.11", port: 31234, kubeProxy: true }],
    }),
  });
  t.notOk(ids(judge(f, new Map(), NOW)).includes(ID));
});

t.test("listeners unread: not raised, the node is not ready", async (t) => {
  const j = judge(
    twoNics({ listeners: null }),
    new Map([["listeners", { kind: "io", message: "EACCES" }]]),
    NOW,
  );
  t.notOk(ids(j).includes(ID));
  t.not(j.verdict, "ready");
});

t.test("after the switch: nothing", async (t) => {
  const f = twoNics({
    listeners: listeners(),
    proxyMode: { mode: "nftables" },
    configz: configz({ mode: "nftables" }),
  });
  t.notOk(ids(judge(f, new Map(), NOW)).includes(ID));
});

// A node below kernel 5.13 moves to iptables mode (kernel-too-old-for-nftables), whose nodePortAddresses
// still defaults to every address: only nftables mode defaults it to primary (cmd/kube-proxy/app/server_linux.go
// platformApplyDefaults), so the health server keeps listening on 0.0.0.0. Expected: no finding, nothing blocked;
// a kernel not read is not old, and the finding stands.
t.test("a kernel below 5.13 (its next mode is iptables): health-check ports do not shrink", async (t) => {
  const checks = listeners({
    conntrack: { read: true, to: [{ address: "10.0.0.5", port: 31234, connections: 3 }] },
  });
  const old = judge(twoNics({ listeners: checks, kernel: kernel("5.4.0-216-generic") }), new Map(), NOW);
  t.ok(ids(old).includes("kernel-too-old-for-nftables"));
  t.notOk(ids(old).includes(ID));
  t.equal(find(twoNics({ listeners: checks, kernel: null }))?.severity, "error", "kernel unread: still told");
});
