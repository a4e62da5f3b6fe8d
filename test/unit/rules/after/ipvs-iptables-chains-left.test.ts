import t from "tap";
import type { IptablesBackendRead } from "../../../../agent/facts/netfilter.js";
import { ids, judge, nftNode, NOW } from "../../../helpers/rules.js";
import { iptablesBackend } from "../../../helpers/facts.js";

type Chain = IptablesBackendRead["kubeChains"][number];

t.test(
  "kube-proxy's ipvs-mode chains left on an nftables node; kubelet's chains are not leftovers",
  async (t) => {
    const chain = (name: string, owner: Chain["owner"] = "kube-proxy-ipvs", table = "nat"): Chain => ({
      table,
      name,
      rules: 3,
      owner,
    });
    const judged = (kubeChains: Chain[]) =>
      ids(judge(nftNode({ iptables: { backends: [iptablesBackend({ kubeChains })] } }), new Map(), NOW));
    t.ok(judged([chain("KUBE-SERVICES"), chain("KUBE-NODE-PORT")]).includes("ipvs-iptables-chains-left"));
    t.notOk(judged([]).includes("ipvs-iptables-chains-left"), "no chains: nothing left");
    t.notOk(
      judged([
        chain("KUBE-FIREWALL", "kubelet", "filter"),
        chain("KUBE-KUBELET-CANARY", "kubelet", "mangle"),
      ]).includes("ipvs-iptables-chains-left"),
      "kubelet's chains are kubelet's, not kube-proxy leftovers",
    );
  },
);
