import { rule } from "../rule.js";

export const ipvsScheduler = rule({
  findings: { "ipvs-scheduler-not-rr": { severity: "info", stage: "before" } },
  needs: ["configz", "ipvs", "kubeIpvs0", "addresses"],
  evaluate({ facts, view: { phase, virtualServers } }) {
    if (phase !== "ipvs") return [];
    const configured = facts.configz?.ipvs.scheduler ?? "";
    // kube-proxy's own virtual servers only (its Service IPs, its proven NodePorts): keepalived's or kube-vip's
    // scheduler is theirs, and nftables mode takes nothing from it (they go down with the flush:
    // foreign-ipvs-virtual-servers). A NodePort only guessed from the port range is not taken as proof.
    const guessed = new Set(virtualServers.nodePortsGuessed);
    const mine = [...virtualServers.services, ...virtualServers.nodePorts.filter((v) => !guessed.has(v))];
    const seen = [...new Set(mine.map((v) => v.scheduler))].filter((s) => s !== "rr").sort();
    if ((configured === "" || configured === "rr") && seen.length === 0) return [];
    // sh and mh hash the client's address: each client kept its real server, with no timeout. nftables
    // mode picks at random per new connection (pkg/proxy/nftables/proxier.go v1.34.4, numgen random).
    const sticky = [...new Set([configured, ...seen])].filter((s) => s === "sh" || s === "mh").sort();
    return [
      {
        id: "ipvs-scheduler-not-rr",
        severity: "info",
        stage: "before",
        blocksMigration: false,
        // Named by what is not rr: a config saying rr with sh on kube-proxy's virtual servers is about sh.
        title:
          `IPVS scheduler ${configured !== "" && configured !== "rr" ? configured : seen.join(", ")} has no nftables equivalent (balancing becomes random)` +
          (sticky.length > 0
            ? `; the source-IP stickiness ${sticky.join(", ")} gave every client is lost unless the Service sets sessionAffinity: ClientIP`
            : ""),
        evidence: {
          configured: configured || null,
          schedulersOfKubeProxyVirtualServers: seen,
          perService: false,
          stickinessLost: sticky,
        },
        remedy:
          "Nothing is lost that worked: lc counted only this node's connections and every real server has weight 1. For stickiness use Service sessionAffinity: ClientIP; for locality internalTrafficPolicy: Local",
      },
    ];
  },
});
