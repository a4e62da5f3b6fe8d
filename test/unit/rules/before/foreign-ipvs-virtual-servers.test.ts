import t from "tap";
import { addresses, ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";
import { vs } from "../../../helpers/facts.js";

t.test("foreign IPVS virtual servers are named; kube-proxy's and NodePorts are not", async (t) => {
  const f = ipvsNode();
  f.ipvs!.virtualServers.push(vs("192.168.4.11", 30080), vs("192.168.4.200", 80), {
    ...vs("0.0.0.0", 0),
    protocol: "FWM",
    address: null,
    port: null,
    fwmark: 7,
  });
  f.ipvs!.virtualServerCount = 5;
  f.addresses = addresses("192.168.4.11", ["192.168.4.200"]);
  const j = judge(f, new Map(), NOW);
  const x = j.findings.find((y) => y.id === "foreign-ipvs-virtual-servers");
  t.same(x?.evidence.virtualServers, ["TCP 192.168.4.200:80", "FWM 7"]);
  t.equal(j.verdict, "blocked");
});

t.test("without kube-ipvs0 facts nothing is called foreign", async (t) => {
  const f = ipvsNode({ kubeIpvs0: null });
  const j = judge(
    f,
    new Map([["kube-ipvs0", { kind: "missing-tool" as const, message: "ip not found" }]]),
    NOW,
  );
  t.notOk(ids(j).includes("foreign-ipvs-virtual-servers"));
});
