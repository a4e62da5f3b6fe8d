import { LEFT_BEHIND } from "../../view/build.js";
import { deletion } from "../guess.js";
import { rule } from "../rule.js";

export const ipvsLeft = rule({
  findings: { "ipvs-virtual-servers-left": { severity: "warning", stage: "after", tags: ["leftover"] } },
  needs: ["ipvs"],
  evaluate({ facts, view }) {
    const { phase } = view;
    const n = facts.ipvs?.virtualServerCount ?? 0;
    if (n === 0 || !LEFT_BEHIND.has(phase)) return [];
    return [
      {
        id: "ipvs-virtual-servers-left",
        severity: "warning",
        stage: "after",
        blocksMigration: false,
        title: `${n} IPVS virtual servers (${facts.ipvs?.realServerCount ?? 0} real servers) are left in the kernel`,
        evidence: {
          virtualServers: n,
          realServers: facts.ipvs?.realServerCount ?? 0,
          schedulers: Object.keys(facts.ipvs?.schedulers ?? {}),
        },
        remedy: deletion(view, "ipvsadm --clear   (after checking none belong to keepalived or kube-vip)"),
      },
    ];
  },
});
