import { vsKey } from "../../parse/ipvs-proc.js";
import { listed, rule } from "../rule.js";

/**
 * sessionAffinity: ClientIP as the node shows it in ipvs mode: each of a Service's virtual servers is
 * persistent on its own (pkg/proxy/ipvs/proxier.go v1.34.4: FlagPersistent, Timeout =
 * StickyMaxAgeSeconds, on the ClusterIP, each NodePort address, each externalIP and LB IP), so a client has
 * one affinity per address. nftables mode keeps one per endpoint keyed by client IP "without regard to which
 * service IP was used", refreshed by each new connection (pkg/proxy/nftables/proxier.go v1.34.4, affinity-*
 * sets, `update @`): KEP-3866 Non-Goals, the iptables behaviour, "different from ipvs".
 */
export const ipvsSessionAffinity = rule({
  findings: { "ipvs-session-affinity-per-virtual-server": { severity: "info", stage: "before" } },
  needs: ["ipvs", "kubeIpvs0", "addresses"],
  evaluate({ view: { phase, virtualServers } }, opts) {
    if (phase !== "ipvs") return [];
    // kube-proxy's own only: keepalived's persistence on a VIP goes with the flush (foreign-ipvs-virtual-servers).
    const guessed = new Set(virtualServers.nodePortsGuessed);
    const mine = [...virtualServers.services, ...virtualServers.nodePorts.filter((v) => !guessed.has(v))];
    const persistent = mine.filter((v) => v.flags.includes("persistent"));
    if (persistent.length === 0) return [];
    return [
      {
        id: "ipvs-session-affinity-per-virtual-server",
        severity: "info",
        stage: "before",
        blocksMigration: false,
        title: `${persistent.length} IPVS virtual server(s) of kube-proxy's are persistent (sessionAffinity: ClientIP), each address on its own; nftables mode keeps one affinity per endpoint across all of a Service's IPs, refreshed by each new connection`,
        evidence: {
          count: persistent.length,
          // /proc/net/ip_vs prints the timeout in jiffies (HZ per second); `ipvsadm -Ln` prints seconds.
          virtualServers: listed(
            persistent.map((v) => `${vsKey(v)} persistent ${v.persistentTimeoutJiffies ?? "?"} jiffies`),
            opts.maxListed,
          ),
        },
        remedy:
          "Nothing to change on the node. On the canary, check clients that reach one of these Services at several addresses (they now stick to one endpoint for all) and long-lived clients that rarely open new connections (the affinity lapses timeoutSeconds after the last new one); the Services are listed by cluster-services-session-affinity",
      },
    ];
  },
});
