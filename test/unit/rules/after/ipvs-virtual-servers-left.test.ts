import t from "tap";
import { ids, ipvsNode, judge, kubeRouterNode, nftNode, NOW } from "../../../helpers/rules.js";
import { refused, vs } from "../../../helpers/facts.js";

t.test("IPVS virtual servers left on an nftables node; none left is nothing", async (t) => {
  const ipvs = ipvsNode().ipvs!;
  const left = judge(nftNode({ ipvs }), new Map(), NOW);
  t.ok(ids(left).includes("ipvs-virtual-servers-left"));
  t.notOk(ids(judge(nftNode(), new Map(), NOW)).includes("ipvs-virtual-servers-left"));
});

t.test("kube-router's virtual servers are its live Services, never left behind", async (t) => {
  const silent = new Map([["kube-proxy-mode", refused]]);
  t.notOk(ids(judge(kubeRouterNode(), silent, NOW)).includes("ipvs-virtual-servers-left"));
  // One it did not make (no Service IP on kube-dummy-if, no NodePort): named alone, never --clear.
  const f = kubeRouterNode();
  f.ipvs = {
    ...f.ipvs!,
    virtualServerCount: 4,
    virtualServers: [...f.ipvs!.virtualServers, vs("10.96.7.7", 8443, { realServers: 0 })],
  };
  const left = judge(f, silent, NOW).findings.find((x) => x.id === "ipvs-virtual-servers-left");
  t.equal(left?.evidence.virtualServers, 1);
  t.match(
    left?.remedy,
    /Only if [^:]*: ipvsadm -D -t 10\.96\.7\.7:8443 /,
    "one by one, and only on a condition",
  );
  t.match(left?.remedy, /never ipvsadm --clear/);
});
