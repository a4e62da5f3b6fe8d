import t from "tap";
import { ids, judge, nftNode, NOW } from "../../../helpers/rules.js";
import { iptablesBackend } from "../../../helpers/facts.js";

t.test(
  "kube-proxy's ipvs-mode chains left on an nftables node; kubelet's chains are not leftovers",
  async (t) => {
    const chain = (name: string) => ({
      table: "nat",
      name,
      rules: 3,
      owner: "kube-proxy-ipvs",
      policy: null,
      references: 0,
    });
    const left = judge(
      nftNode({
        iptables: {
          backends: [iptablesBackend({ kubeChains: [chain("KUBE-SERVICES"), chain("KUBE-NODE-PORT")] })],
        },
      }),
      new Map(),
      NOW,
    );
    t.ok(ids(left).includes("ipvs-iptables-chains-left"));
    t.notOk(
      ids(judge(nftNode({ iptables: { backends: [iptablesBackend()] } }), new Map(), NOW)).includes(
        "ipvs-iptables-chains-left",
      ),
    );
  },
);
