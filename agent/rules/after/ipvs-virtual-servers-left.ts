import type { VirtualServer } from "../../facts/ipvs.js";
import { LEFT_BEHIND } from "../../view/build.js";
import { connectionsTo, cutSentence } from "../../view/ipvs-connections.js";
import { vsKey } from "../../parse/ipvs-proc.js";
import { deletion } from "../guess.js";
import { listed, rule } from "../rule.js";

const PROTO_FLAG: Record<string, string> = { TCP: "-t", UDP: "-u", SCTP: "--sctp-service" };

const deleteOne = (v: VirtualServer): string =>
  v.address === null || v.port === null
    ? `ipvsadm -D -f ${v.fwmark}`
    : `ipvsadm -D ${PROTO_FLAG[v.protocol] ?? "-t"} ${v.family === "inet6" ? `[${v.address}]` : v.address}:${v.port}`;

export const ipvsLeft = rule({
  findings: { "ipvs-virtual-servers-left": { severity: "warning", stage: "after", tags: ["leftover"] } },
  needs: ["ipvs"],
  evaluate({ facts, view }, opts) {
    const { phase, otherServiceProxy: other } = view;
    const proxy = other === null || other === "absent" ? null : other;
    // Another proxy's virtual servers (kube-router's) are its live Services, never left behind.
    const theirs = new Set(proxy?.virtualServers ?? []);
    const n = (facts.ipvs?.virtualServerCount ?? 0) - theirs.size;
    if (n <= 0 || !LEFT_BEHIND.has(phase)) return [];
    const left = (facts.ipvs?.virtualServers ?? []).filter((v) => !theirs.has(v));
    const realServers =
      proxy === null ? (facts.ipvs?.realServerCount ?? 0) : left.reduce((a, v) => a + v.realServers, 0);
    // Each connection IPVS tracks dies with its virtual server: say how many before anyone deletes.
    const deleted = new Set(left.map(vsKey));
    const cut = cutSentence(connectionsTo(facts, (a) => deleted.has(vsKey({ ...a, fwmark: null }))));
    // --clear would take kube-router's Services with it: name each one left instead.
    const remedy =
      proxy === null
        ? "ipvsadm --clear   (after checking none belong to keepalived or kube-vip)"
        : `${listed(left.map(deleteOne), opts.maxListed).join("; ")}   (one by one, never ipvsadm --clear: that would also delete the ${theirs.size} virtual servers ${proxy.name} serves; after checking none belong to keepalived or kube-vip)`;
    return [
      {
        id: "ipvs-virtual-servers-left",
        severity: "warning",
        stage: "after",
        blocksMigration: false,
        title: `${n} IPVS virtual servers (${realServers} real servers) are left in the kernel`,
        evidence: {
          virtualServers: n,
          realServers,
          schedulers: Object.keys(facts.ipvs?.schedulers ?? {}),
          ...(proxy === null ? {} : { otherProxyVirtualServers: theirs.size }),
        },
        remedy: deletion(view, `${remedy}${cut}`),
      },
    ];
  },
});
