import t from "tap";
import { readFileSync } from "node:fs";
import { deletionProof, type IpvsEvidence } from "../../../agent/cleanup/ipvs-proof.js";
import { planCleanup } from "../../../agent/cleanup/plan.js";
import { nodePortIpsets, SERVICE_ADDRESS_IPSETS } from "../../../agent/facts/owners.js";
import { parseIpsetMembers } from "../../../agent/parse/ipset-list.js";
import { parseIpvsProc } from "../../../agent/parse/ipvs-proc.js";
import type { NodeReport } from "../../../agent/report/schema.js";
import { emptyFacts, noKernelState, vs } from "../../helpers/facts.js";
import { addresses, kubeDummyIf } from "../../helpers/rules.js";
import { reportOf } from "../../helpers/reports.js";

// The proof cleanup needs before it deletes an IPVS virtual server, from what only kube-proxy does
// (Masq forwarding, its own records of address and port), on tables and sets recorded in a real UML
// guest (test/fixtures/ipvs/README.md).
const fx = (p: string) => readFileSync(new URL(`../../fixtures/ipvs/${p}`, import.meta.url), "utf8");

function evidence(ipVs: string, ipset: string): { ev: IpvsEvidence; table: ReturnType<typeof table> } {
  const tb = table(ipVs);
  const sets = parseIpsetMembers(fx(ipset));
  if (!sets.ok) throw new Error(sets.error);
  return { ev: { read: true, forwards: tb.forwards!, sets: sets.value }, table: tb };
}
function table(ipVs: string) {
  const p = parseIpvsProc(fx(ipVs), { collectForwards: true });
  if (!p.ok) throw new Error(p.error);
  return p.value;
}

const primary = (ipv4: string) => ({ ipv4, ipv6: null, source: "config" as const });

/** An IPVS table holding this one virtual server. */
const only = (v: ReturnType<typeof table>["virtualServers"][number]) => ({
  available: true,
  virtualServerCount: 1,
  realServerCount: v.realServers,
  schedulers: { [v.scheduler]: 1 },
  virtualServers: [v],
  timeouts: null,
});

t.test("ipset list members, as recorded", async (t) => {
  const p = parseIpsetMembers(fx("ipsets/kube/ipset-list.txt"));
  if (!p.ok) return t.fail(p.error);
  t.same([...(p.value.get("KUBE-CLUSTER-IP") ?? [])].sort(), [
    "10.96.0.1,tcp:443",
    "10.96.0.10,tcp:53",
    "10.96.0.10,udp:53",
  ]);
  t.same([...(p.value.get("KUBE-NODE-PORT-TCP") ?? [])], ["30080"]);
  t.same([...(p.value.get("KUBE-6-LOOP-BACK") ?? [])], [], "an empty set is read as empty");
});

t.test(
  "kube-ipvs0 deleted: 10.96.0.1:443, masqueraded and in KUBE-CLUSTER-IP, is still kube-proxy's",
  async (t) => {
    const { ev, table: tb } = evidence("kube-small/proc/net/ip_vs", "ipsets/kube/ipset-list.txt");
    const api = tb.virtualServers.find((v) => v.address === "10.96.0.1" && v.port === 443)!;
    t.match(
      deletionProof(api, ev, { kubeIpvs0: new Set(), primary: primary("192.168.4.11"), kubeRouterIps: null }),
      {
        proven: true,
        why: /KUBE-CLUSTER-IP/,
      },
    );
    // The plan: deleted, not kept as foreign (before: kept, since it is not on kube-ipvs0 any more).
    const r: NodeReport = reportOf(
      emptyFacts({
        ...noKernelState,
        addresses: addresses("192.168.4.11"),
        ipvs: only(api),
      }),
    );
    const plan = planCleanup(r, [], { strictArp: false, ipvsEvidence: ev });
    t.same(
      plan.actions.map((a) => a.command),
      ["ipvsadm --clear"],
      "every virtual server is kube-proxy's: --clear",
    );
    t.same(plan.kept, []);
  },
);

t.test("Route or Tunnel forwarding is never kube-proxy's, wherever the address is", async (t) => {
  const { ev, table: tb } = evidence("schedulers/proc/net/ip_vs", "ipsets/kube/ipset-list.txt");
  const lvs = tb.virtualServers.find((v) => v.address === "192.168.50.100")!;
  const ctx = {
    kubeIpvs0: new Set(["192.168.50.100"]),
    primary: primary("192.168.50.100"),
    kubeRouterIps: null,
  };
  t.match(deletionProof(lvs, ev, ctx), {
    proven: false,
    leave: "foreign",
    why: /forwards by Route, Tunnel: kube-proxy only masquerades/,
  });
});

t.test(
  "a keepalived VIP in the NodePort range (wlc, Route) is kept; kube-proxy's deleted one by one",
  async (t) => {
    const { ev: kube, table: tb } = evidence("kube-small/proc/net/ip_vs", "ipsets/kube/ipset-list.txt");
    if (!kube.read) return t.fail("read");
    const api = tb.virtualServers.find((v) => v.address === "10.96.0.1" && v.port === 443)!;
    // keepalived's virtual_server 192.168.4.50 30500 { lb_algo wlc; lb_kind DR }: its forwarding as
    // /proc/net/ip_vs names it ("Route"); the UML test builds it for real (cleanup-uml-guest.sh).
    const vip = { ...api, address: "192.168.4.50", port: 30500, scheduler: "wlc", realServers: 2 };
    const ev: IpvsEvidence = {
      ...kube,
      forwards: new Map([...kube.forwards, ["TCP 192.168.4.50:30500", ["Route"]]]),
    };
    const r = reportOf(
      emptyFacts({
        ...noKernelState,
        addresses: addresses("192.168.4.11", ["192.168.4.50"]),
        kubeIpvs0: {
          present: true,
          kind: "dummy",
          operState: "DOWN",
          flags: [],
          addresses: [{ family: "inet", address: "10.96.0.1", prefixLen: 32 }],
        },
        ipvs: {
          available: true,
          virtualServerCount: 2,
          realServerCount: 5,
          schedulers: { rr: 1, wlc: 1 },
          virtualServers: [api, vip],
          timeouts: null,
        },
      }),
    );
    const plan = planCleanup(r, [], { strictArp: false, ipvsEvidence: ev });
    t.same(
      plan.actions.filter((a) => a.step.startsWith("ipvs")).map((a) => a.command),
      ["ipvsadm -D -t 10.96.0.1:443"],
      "never --clear while a foreign virtual server is there",
    );
    t.match(plan.kept, [{ what: "IPVS TCP 192.168.4.50:30500", why: /forwards by Route/ }]);

    const unread = planCleanup(r, [], { strictArp: false });
    t.same(
      unread.actions.filter((a) => a.step.startsWith("ipvs")),
      [],
      "without the evidence nothing in IPVS is deleted",
    );
    t.equal(unread.unread.filter((u) => u.what.startsWith("IPVS")).length, 2, "each named as unknown");
  },
);

t.test(
  "a Service IP on kube-dummy-if is kube-router's, even when a set kube-proxy left names it",
  async (t) => {
    const { ev, table: tb } = evidence("kube-small/proc/net/ip_vs", "ipsets/kube/ipset-list.txt");
    const api = tb.virtualServers.find((v) => v.address === "10.96.0.1" && v.port === 443)!;
    const ctx = {
      kubeIpvs0: new Set(["10.96.0.1"]),
      primary: primary("192.168.4.11"),
      kubeRouterIps: new Set(["10.96.0.1"]),
    };
    t.match(deletionProof(api, ev, ctx), {
      proven: false,
      leave: "foreign",
      why: /kube-dummy-if: kube-router/,
    });
    const base = addresses("192.168.4.11");
    const r: NodeReport = reportOf(
      emptyFacts({
        ...noKernelState,
        addresses: {
          ...base,
          interfaces: [...base.interfaces, kubeDummyIf("10.96.0.1")],
        },
        ipvs: only(api),
      }),
    );
    const plan = planCleanup(r, [], { strictArp: false, ipvsEvidence: ev });
    t.same(plan.actions, [], "nothing of kube-router's is deleted, and no --clear");
    t.match(plan.kept, [{ what: "IPVS TCP 10.96.0.1:443", why: /kube-router/ }]);
  },
);

t.test(
  "a keepalived NAT virtual server on a local VIP, its port a left-over NodePort: left alone, saying why",
  async (t) => {
    const { ev: kube, table: tb } = evidence("kube-small/proc/net/ip_vs", "ipsets/kube/ipset-list.txt");
    if (!kube.read) return t.fail("read");
    const api = tb.virtualServers.find((v) => v.address === "10.96.0.1" && v.port === 443)!;
    // 30080 is in the recorded KUBE-NODE-PORT-TCP. kube-proxy's own NodePort on the node's address,
    // and keepalived's `virtual_server 192.168.4.50 30080 { lb_kind NAT }` on a VIP it holds on eth0:
    // both masquerade, both on a local address, both on a port kube-proxy's set lists.
    const nodePort = { ...api, address: "192.168.4.11", port: 30080 };
    const vip = { ...api, address: "192.168.4.50", port: 30080, scheduler: "wlc" };
    const ev: IpvsEvidence = {
      ...kube,
      forwards: new Map([
        ...kube.forwards,
        ["TCP 192.168.4.11:30080", ["Masq"]],
        ["TCP 192.168.4.50:30080", ["Masq"]],
      ]),
    };
    const r = reportOf(
      emptyFacts({
        ...noKernelState,
        addresses: addresses("192.168.4.11", ["192.168.4.50"]),
        ipvs: {
          available: true,
          virtualServerCount: 3,
          realServerCount: 9,
          schedulers: { rr: 2, wlc: 1 },
          virtualServers: [api, nodePort, vip],
          timeouts: null,
        },
      }),
    );
    const plan = planCleanup(r, [], { strictArp: false, ipvsEvidence: ev });
    t.same(
      plan.actions.filter((a) => a.step.startsWith("ipvs")).map((a) => a.command),
      ["ipvsadm -D -t 10.96.0.1:443", "ipvsadm -D -t 192.168.4.11:30080"],
      "kube-proxy's ClusterIP and its NodePort on the node's address go; never --clear",
    );
    t.match(plan.kept, [
      {
        what: "IPVS TCP 192.168.4.50:30080",
        why: /NodePort in kube-proxy's KUBE-NODE-PORT-TCP, but 192\.168\.4\.50 is not the node's primary address.*keepalived.*Not deleted on a guess/,
      },
    ]);

    // Without the node's primary address, no NodePort is proven: each is left, saying how to tell.
    const base = addresses("192.168.4.11", ["192.168.4.50"]);
    const noPrimary = reportOf(
      emptyFacts({
        ...noKernelState,
        addresses: { ...base, primary: { ipv4: null, ipv6: null, source: "none" } },
        ipvs: { ...r.facts.ipvs!, virtualServers: [api, nodePort, vip] },
      }),
    );
    const p2 = planCleanup(noPrimary, [], { strictArp: false, ipvsEvidence: ev });
    t.same(
      p2.actions.filter((a) => a.step.startsWith("ipvs")).map((a) => a.command),
      ["ipvsadm -D -t 10.96.0.1:443"],
    );
    t.match(
      p2.kept.map((k) => k.why),
      [/not the node's primary address \(not known: pass --node-ip\)/, /not known: pass --node-ip/],
    );
  },
);

t.test(
  "SCTP NodePorts: kube-proxy's set names each node address, so the address itself is proven",
  async (t) => {
    const sctp = (address: string) => vs(address, 30090, { protocol: "SCTP" });
    const ev: IpvsEvidence = {
      read: true,
      forwards: new Map([
        ["SCTP 192.168.4.50:30090", ["Masq"]],
        ["SCTP 192.168.4.51:30090", ["Masq"]],
      ]),
      // As pkg/proxy/ipvs/proxier.go writes it: one hash:ip,port member per node address.
      sets: new Map([["KUBE-NODE-PORT-SCTP-HASH", new Set(["192.168.4.50,sctp:30090"])]]),
    };
    const ctx = { kubeIpvs0: new Set<string>(), primary: primary("192.168.4.11"), kubeRouterIps: null };
    t.match(deletionProof(sctp("192.168.4.50"), ev, ctx), { proven: true, why: /KUBE-NODE-PORT-SCTP-HASH/ });
    t.match(deletionProof(sctp("192.168.4.51"), ev, ctx), { proven: false, leave: "foreign" });
  },
);

t.test("kube-ipvs0 proves an address, never a port", async (t) => {
  const { ev, table: tb } = evidence("kube-small/proc/net/ip_vs", "ipsets/kube/ipset-list.txt");
  if (!ev.read) return t.fail("read");
  const api = tb.virtualServers.find((v) => v.address === "10.96.0.1" && v.port === 443)!;
  const withForwards = (...keys: string[]): IpvsEvidence => ({
    ...ev,
    forwards: new Map([...ev.forwards, ...keys.map((k) => [k, ["Masq"]] as [string, string[]])]),
  });
  const ctx = { kubeIpvs0: new Set(["10.96.0.1"]), primary: primary("192.168.4.11"), kubeRouterIps: null };
  // 10.96.0.1,tcp:9999 is in no recorded set, 30080 is the recorded NodePort.
  const stray = { ...api, port: 9999 };
  t.match(deletionProof(stray, withForwards("TCP 10.96.0.1:9999"), ctx), {
    proven: false,
    leave: "unproven",
    why: /on kube-ipvs0, but 10\.96\.0\.1,tcp:9999 is in none of kube-proxy's Service sets/,
  });
  const nodePort = { ...api, port: 30080 };
  t.match(deletionProof(nodePort, withForwards("TCP 10.96.0.1:30080"), ctx), {
    proven: true,
    why: /NodePort on kube-ipvs0, its port in kube-proxy's KUBE-NODE-PORT-TCP/,
  });
});

// The sets the proof reads come from facts/owners.ts; these are their names in kubernetes/kubernetes
// pkg/proxy/ipvs/ipset.go, with the IPv6 proxier's KUBE-6- twins.
t.test(
  "the proof's ipsets: the Service and NodePort sets facts/owners.ts knows, both families",
  async (t) => {
    t.same(SERVICE_ADDRESS_IPSETS, [
      "KUBE-CLUSTER-IP",
      "KUBE-6-CLUSTER-IP",
      "KUBE-EXTERNAL-IP",
      "KUBE-6-EXTERNAL-IP",
      "KUBE-EXTERNAL-IP-LOCAL",
      "KUBE-6-EXTERNAL-IP-LOCAL",
      "KUBE-LOAD-BALANCER",
      "KUBE-6-LOAD-BALANCER",
    ]);
    t.same(nodePortIpsets("TCP"), ["KUBE-NODE-PORT-TCP", "KUBE-6-NODE-PORT-TCP"]);
    t.same(nodePortIpsets("UDP"), ["KUBE-NODE-PORT-UDP", "KUBE-6-NODE-PORT-UDP"]);
    t.same(
      nodePortIpsets("SCTP"),
      ["KUBE-NODE-PORT-SCTP-HASH", "KUBE-6-NODE-PORT-SCTP-HASH"],
      "not the legacy bitmap",
    );
    t.same(nodePortIpsets("FWM"), []);
  },
);
