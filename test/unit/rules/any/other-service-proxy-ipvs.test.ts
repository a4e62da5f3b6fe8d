import t from "tap";
import { ids, judge, kubeRouterNode, NOW } from "../../../helpers/rules.js";
import { refused, vs } from "../../../helpers/facts.js";
import { firstDeletion } from "../../../helpers/remedies.js";
import type { ProbeError } from "../../../../agent/facts/probe-error.js";

// kube-router as the service proxy (cloudnativelabs/kube-router @7c2c2779 pkg/controllers/proxy): its
// IPVS virtual servers are its live Services, on kube-dummy-if, with no kube-proxy on the node.
const silent = new Map<string, ProbeError>([["kube-proxy-mode", refused]]);
const failed = (probe: string) =>
  new Map<string, ProbeError>([...silent, [probe, { kind: "exit-status", message: "exit status 1" }]]);

t.test("kube-router proxies, no kube-proxy: info, clean, nothing offered for deletion", async (t) => {
  const j = judge(kubeRouterNode(), silent, NOW);
  t.equal(j.phase, "none");
  t.equal(j.source, "kernel-state");
  t.notOk(j.view.inferred, "kube-router's virtual servers are no kube-proxy state: nothing is guessed");
  t.same(ids(j), ["kube-proxy-free", "other-service-proxy-ipvs"]);
  t.equal(j.verdict, "clean");
  const f = j.findings.find((x) => x.id === "other-service-proxy-ipvs")!;
  t.equal(f.severity, "info");
  t.notOk(f.blocksMigration);
  t.match(f.title, /still run on IPVS/, "says the node is still IPVS");
  t.equal(f.evidence.virtualServers, 3);
  t.equal(f.evidence.proxy, "kube-router");
  t.same(f.evidence.serviceIps, ["10.96.0.1", "10.96.0.10"]);
  t.ok(
    (f.evidence.seen as string[]).some((s) => s.includes("KUBE-ROUTER-SERVICES")),
    "its chain is part of what it saw",
  );
  for (const x of j.findings) t.equal(firstDeletion(x.remedy), -1, `${x.id}: deletes nothing`);
});

t.test("unread is never absent: links or ipsets not read decide nothing either way", async (t) => {
  for (const [probe, over] of [
    ["addresses", { addresses: null }],
    ["ipsets", { ipsets: null }],
  ] as const) {
    const j = judge(kubeRouterNode(over), failed(probe), NOW);
    t.equal(j.view.otherServiceProxy, null, `${probe} unread: kube-router neither seen nor ruled out`);
    t.notOk(ids(j).includes("other-service-proxy-ipvs"), `${probe} unread: no kube-router finding`);
    t.ok(j.view.inferred, `${probe} unread: the virtual servers stay unexplained, so the phase is a guess`);
    t.not(j.verdict, "clean", `${probe} unread: never clean`);
    const left = j.findings.find((x) => x.id === "ipvs-virtual-servers-left");
    t.ok(left, `${probe} unread: the virtual servers are reported, as before`);
    t.match(
      left!.remedy,
      /^Confirm first what runs on this node/,
      "and any deletion waits for a confirmation",
    );
    t.match(left!.remedy, /kube-router's service proxy/, "the confirmation names kube-router");
  }
});

t.test("what read shows missing rules kube-router out", async (t) => {
  const noLink = kubeRouterNode();
  noLink.addresses = { ...noLink.addresses!, interfaces: noLink.addresses!.interfaces.slice(0, 2) };
  t.equal(judge(noLink, silent, NOW).view.otherServiceProxy, "absent", "no kube-dummy-if");
  const netpolOnly = kubeRouterNode();
  netpolOnly.ipsets = {
    ...netpolOnly.ipsets!,
    sets: netpolOnly.ipsets!.sets.filter((s) => s.name === "kube-router-local-ips"),
  };
  const j = judge(netpolOnly, silent, NOW);
  t.equal(j.view.otherServiceProxy, "absent", "no kube-router-svip / -svip-prt");
  t.notOk(ids(j).includes("other-service-proxy-ipvs"));
  const notDummy = kubeRouterNode();
  notDummy.addresses = {
    ...notDummy.addresses!,
    interfaces: notDummy.addresses!.interfaces.map((i) =>
      i.name === "kube-dummy-if" ? { ...i, kind: "veth" } : i,
    ),
  };
  t.equal(judge(notDummy, silent, NOW).view.otherServiceProxy, "absent", "a kube-dummy-if that is no dummy");
});

t.test("kube-proxy answering beside kube-router: two proxies, an error", async (t) => {
  const before = judge(kubeRouterNode({ proxyMode: { mode: "ipvs" } }), new Map(), NOW);
  const f = before.findings.find((x) => x.id === "other-service-proxy-ipvs")!;
  t.equal(f.severity, "error");
  t.equal(f.stage, "before");
  t.ok(f.blocksMigration, "switching kube-proxy would flush kube-router's Services");
  t.equal(before.verdict, "blocked");
  t.notOk(ids(before).includes("foreign-ipvs-virtual-servers"), "kube-router's are no keepalived VIPs");

  // After kube-proxy's switch: its nftables start flushes IPVS, so kube-router's are broken now.
  const keepalived = vs("172.18.0.100", 80, { scheduler: "wlc" });
  const facts = kubeRouterNode({ proxyMode: { mode: "nftables" } });
  facts.ipvs = {
    ...facts.ipvs!,
    virtualServerCount: 4,
    virtualServers: [...facts.ipvs!.virtualServers, keepalived],
  };
  const after = judge(facts, new Map(), NOW);
  const g = after.findings.find((x) => x.id === "other-service-proxy-ipvs")!;
  t.equal(g.severity, "error");
  t.equal(after.verdict, "unhealthy");
  t.notOk(ids(after).includes("strict-arp-sysctls-left"), "kube-router sets arp_ignore/arp_announce itself");
  const left = after.findings.find((x) => x.id === "ipvs-virtual-servers-left")!;
  t.equal(left.evidence.virtualServers, 1, "only the virtual server kube-router did not make");
  t.equal(left.evidence.otherProxyVirtualServers, 3);
  t.match(left.remedy, /^ipvsadm -D -t 172\.18\.0\.100:80/, "deleted by name");
  t.notMatch(left.remedy, /^ipvsadm --clear/, "never the whole table");
});

t.test(
  "kube-dummy-if is up (kube-router's LinkSetUp): its kernel-given fe80:: is no Service IP",
  async (t) => {
    const up = kubeRouterNode();
    const link = up.addresses!.interfaces.find((i) => i.name === "kube-dummy-if")!;
    link.addresses = [
      ...link.addresses,
      { family: "inet6" as const, address: "fe80::7c40:24ff:fe9c:16f8", prefixLen: 64, scope: "link" },
    ];
    const f = judge(up, silent, NOW).findings.find((x) => x.id === "other-service-proxy-ipvs")!;
    t.same(f.evidence.serviceIps, ["10.96.0.1", "10.96.0.10"]);
    t.match((f.evidence.seen as string[])[0], /with 2 Service addresses/);
  },
);
