import { rule } from "../rule.js";
import { sysctlValue } from "../../facts/host.js";

export const strictArpLeft = rule({
  findings: {
    "strict-arp-sysctls-left": {
      severity: "info",
      stage: "after",
      tags: ["leftover", "config-after-switch"],
    },
  },
  needs: ["sysctls"],
  evaluate({ facts, view: { phase, otherServiceProxy } }) {
    if (phase !== "nftables" && phase !== "none") return [];
    // kube-router's service proxy sets them itself on every start, for the VIPs on its dummy link
    // (kube-router @7c2c2779 network_services_controller.go Run: arp_ignore=1, arp_announce=2).
    if (otherServiceProxy !== null && otherServiceProxy !== "absent") return [];
    const get = (n: string) => sysctlValue(facts.sysctls, n);
    const ignore = get("net.ipv4.conf.all.arp_ignore");
    const announce = get("net.ipv4.conf.all.arp_announce");
    if (ignore !== "1" && announce !== "2") return [];
    return [
      {
        id: "strict-arp-sysctls-left",
        severity: "info",
        stage: "after",
        blocksMigration: false,
        title: "strictARP sysctls are still set (harmless without kube-ipvs0)",
        evidence: { "net.ipv4.conf.all.arp_ignore": ignore, "net.ipv4.conf.all.arp_announce": announce },
        remedy:
          "sysctl -w net.ipv4.conf.all.arp_ignore=0; sysctl -w net.ipv4.conf.all.arp_announce=0   (and remove ipvs.strictARP from the kube-proxy config)",
      },
    ];
  },
});
