import t from "tap";
import { ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";
import { configz, iptablesBackend, noKernelState } from "../../../helpers/facts.js";

const nftNode = (over = {}) =>
  ipvsNode({
    proxyMode: { mode: "nftables" },
    configz: configz({ mode: "nftables" }),
    ipvs: noKernelState.ipvs,
    kubeIpvs0: noKernelState.kubeIpvs0,
    ...over,
  });

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
