import t from "tap";
import { addresses, ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";
import { configz, vs } from "../../../helpers/facts.js";

t.test("an ipvs node on lc is told; on rr it is not", async (t) => {
  const lc = judge(
    ipvsNode({ configz: configz({ ipvs: { ...configz().ipvs, scheduler: "lc" } }) }),
    new Map(),
    NOW,
  );
  t.ok(ids(lc).includes("ipvs-scheduler-not-rr"));
  t.equal(lc.findings.find((f) => f.id === "ipvs-scheduler-not-rr")?.evidence.configured, "lc");
  t.notOk(ids(judge(ipvsNode(), new Map(), NOW)).includes("ipvs-scheduler-not-rr"));
});

// Only kube-proxy's own virtual servers say its scheduler: keepalived's wlc on a node VIP is keepalived's
// (the keepalived case in full: foreign-ipvs-virtual-servers.test.ts and corpus/kubeadm-keepalived.ts).
t.test("the table's schedulers count only on kube-proxy's virtual servers", async (t) => {
  const sh = ipvsNode({ configz: null });
  sh.ipvs!.virtualServers = sh.ipvs!.virtualServers.map((v) => ({ ...v, scheduler: "sh" }));
  const j = judge(sh, new Map(), NOW);
  t.same(
    j.findings.find((f) => f.id === "ipvs-scheduler-not-rr")?.evidence.schedulersOfKubeProxyVirtualServers,
    ["sh"],
    "a Service IP's virtual server on sh: kube-proxy's own",
  );
  const rrSaid = ipvsNode({ configz: configz({ ipvs: { ...configz().ipvs, scheduler: "rr" } }) });
  rrSaid.ipvs!.virtualServers = rrSaid.ipvs!.virtualServers.map((v) => ({ ...v, scheduler: "sh" }));
  t.match(
    judge(rrSaid, new Map(), NOW).findings.find((f) => f.id === "ipvs-scheduler-not-rr")?.title,
    /^IPVS scheduler sh /,
    "named by what is not rr, not by a config saying rr",
  );
  const other = ipvsNode({ addresses: addresses("192.168.4.11", ["192.168.4.200"]) });
  other.ipvs!.virtualServers.push(vs("192.168.4.200", 80, { scheduler: "wlc" }));
  other.ipvs!.virtualServerCount = 3;
  other.ipvs!.schedulers = { rr: 2, wlc: 1 };
  t.notOk(ids(judge(other, new Map(), NOW)).includes("ipvs-scheduler-not-rr"), "keepalived's wlc: not");
});

t.test("sh and mh: the stickiness they gave is lost, said so", async (t) => {
  for (const scheduler of ["sh", "mh"]) {
    const n = ipvsNode({ configz: configz({ ipvs: { ...configz().ipvs, scheduler } }) });
    n.ipvs!.virtualServers = n.ipvs!.virtualServers.map((v) => ({ ...v, scheduler }));
    const f = judge(n, new Map(), NOW).findings.find((x) => x.id === "ipvs-scheduler-not-rr");
    t.match(f?.title, /source-IP stickiness .* is lost/, scheduler);
    t.same(f?.evidence.stickinessLost, [scheduler]);
  }
  const lc = ipvsNode({ configz: configz({ ipvs: { ...configz().ipvs, scheduler: "lc" } }) });
  const f = judge(lc, new Map(), NOW).findings.find((x) => x.id === "ipvs-scheduler-not-rr");
  t.same(f?.evidence.stickinessLost, []);
  t.notMatch(f?.title, /stickiness/);
});
