import t from "tap";
import { ids, ipvsNode, judge, kubeRouterNode, nftNode, NOW } from "../../../helpers/rules.js";
import { noKernelState, refused } from "../../../helpers/facts.js";

const arp = (ignore: string, announce: string) => ({
  values: [
    { name: "net.ipv4.conf.all.arp_ignore", value: ignore },
    { name: "net.ipv4.conf.all.arp_announce", value: announce },
  ],
});

t.test("strictARP sysctls left after the switch are info; cleared ones are nothing", async (t) => {
  const left = judge(nftNode({ sysctls: arp("1", "2") }), new Map(), NOW);
  t.ok(ids(left).includes("strict-arp-sysctls-left"));
  t.notOk(
    ids(judge(nftNode({ sysctls: arp("0", "0") }), new Map(), NOW)).includes("strict-arp-sysctls-left"),
  );
  t.notOk(
    ids(judge(ipvsNode({ sysctls: arp("1", "2") }), new Map(), NOW)).includes("strict-arp-sysctls-left"),
    "in ipvs mode they are needed",
  );
});

t.test("kube-router's service proxy sets them itself: not left, unless it was not read", async (t) => {
  const silent = new Map([["kube-proxy-mode", refused]]);
  t.notOk(
    ids(judge(kubeRouterNode({ sysctls: arp("1", "2") }), silent, NOW)).includes("strict-arp-sysctls-left"),
    "kube-router (network_services_controller.go Run) needs arp_ignore for the VIPs on kube-dummy-if",
  );
  const unread = new Map([...silent, ["ipsets", { kind: "exit-status" as const, message: "exit status 1" }]]);
  const kubeProxyGone = kubeRouterNode({
    sysctls: arp("1", "2"),
    ipsets: null,
    ipvs: noKernelState.ipvs,
  });
  t.ok(
    ids(judge(kubeProxyGone, unread, NOW)).includes("strict-arp-sysctls-left"),
    "kube-router not established (ipsets unread): judged as without it",
  );
});
