import { BEFORE_SWITCH, listed, rule } from "../rule.js";

// kube-router as the service proxy (cloudnativelabs/kube-router @7c2c2779, docs/kubeadm.md: its
// all-features DaemonSet with --run-service-proxy=true, kube-proxy's DaemonSet deleted). Its IPVS is its
// own code: KEP-5495 removes kube-proxy's ipvs mode, not the kernel's IPVS nor kube-router's use of it,
// and kube-router has no nftables service proxy (docs/nftables.md: nftables covers network policy only).
// With kube-proxy also answering, two proxies program the same Services, and kube-proxy in nftables mode
// removes the IPVS rules it finds on start (the guide, "ipvs が残していくもの").
export const otherServiceProxyIpvs = rule({
  findings: {
    "other-service-proxy-ipvs": { severity: ["info", "error"], stage: ["any", "before"] },
  },
  needs: ["addresses", "ipsets"],
  evaluate({ facts, view }, opts) {
    const { otherServiceProxy: proxy, runningMode, phase } = view;
    if (proxy === null || proxy === "absent") return [];
    const vs = proxy.virtualServers.map((v) => `${v.protocol} ${v.address}:${v.port}`);
    const evidence = {
      proxy: proxy.name,
      seen: proxy.evidence,
      virtualServers: facts.ipvs === null ? null : proxy.virtualServers.length,
      listed: listed(vs, opts.maxListed),
      serviceIps: listed(proxy.serviceIps, opts.maxListed),
      kubeProxyAnswers: runningMode,
    };
    if (runningMode === null)
      return [
        {
          id: "other-service-proxy-ipvs",
          severity: "info",
          stage: "any",
          blocksMigration: false,
          title: `${proxy.name}'s service proxy programs IPVS here (${facts.ipvs === null ? "IPVS not read" : `${vs.length} virtual servers`}), not kube-proxy: the ipvs-mode deprecation does not reach this node, but its Services still run on IPVS`,
          evidence,
          remedy: `Nothing to do for kube-proxy's migration. This IPVS state, ${proxy.name}'s dummy link and its ipsets are ${proxy.name}'s live Services: do not clean them up as kube-proxy leftovers. ${proxy.name} proxies with IPVS only (its nftables support covers network policy); moving this node's Services to kube-proxy is a change of its own (kube-router --run-service-proxy=false, then kube-router --cleanup-config and kube-proxy, per kube-router's user guide)`,
        },
      ];
    const before = BEFORE_SWITCH.has(phase);
    return [
      {
        id: "other-service-proxy-ipvs",
        severity: "error",
        stage: before ? "before" : "any",
        blocksMigration: before,
        title: `Two service proxies on one node: ${proxy.name} programs IPVS (${vs.length} virtual servers) while kube-proxy runs ${runningMode} mode`,
        evidence,
        remedy: `Choose one before changing kube-proxy's mode: kube-proxy in nftables mode removes the IPVS rules it finds when it starts, and here they are ${proxy.name}'s live Services. Keep ${proxy.name}: remove kube-proxy from this node (kube-router's kubeadm guide: delete the kube-proxy DaemonSet, then run kube-proxy's own cleanup). Or keep kube-proxy: run ${proxy.name} with --run-service-proxy=false and clean up its proxy state`,
      },
    ];
  },
});
