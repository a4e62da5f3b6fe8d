import t from "tap";
import { readFileSync } from "node:fs";
import { ipvsOwner, type IpvsEvidence } from "../../../agent/cleanup/ipvs-owner.js";
import { planCleanup } from "../../../agent/cleanup/plan.js";
import { parseIpsetMembers } from "../../../agent/parse/ipset-list.js";
import { parseIpvsProc } from "../../../agent/parse/ipvs-proc.js";
import type { NodeReport } from "../../../agent/report/schema.js";
import { emptyFacts, noKernelState } from "../../helpers/facts.js";
import { addresses, kubeDummyIf } from "../../helpers/rules.js";
import { reportOf } from "../../helpers/reports.js";

// #13.3: whose is an IPVS virtual server, from what only kube-proxy does (Masq forwarding, its own
// ipsets), on tables and sets recorded in a real UML guest (test/fixtures/ipvs/README.md).
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
    t.match(ipvsOwner(api, ev, new Set(), new Set(["192.168.4.11"])), {
      owner: "kube-proxy",
      why: /KUBE-CLUSTER-IP/,
    });
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
  t.match(ipvsOwner(lvs, ev, new Set(["192.168.50.100"]), new Set(["192.168.50.100"])), {
    owner: "foreign",
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
    t.match(ipvsOwner(api, ev, new Set(["10.96.0.1"]), new Set(["192.168.4.11"]), new Set(["10.96.0.1"])), {
      owner: "foreign",
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
