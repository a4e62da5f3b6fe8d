import { rule } from "../rule.js";

export const strictArpLeft = rule({
  findings: {
    "strict-arp-sysctls-left": {
      severity: "info",
      stage: "after",
      tags: ["leftover", "config-after-switch"],
    },
  },
  needs: ["sysctls"],
  evaluate({ facts, view: { phase } }) {
    if (phase !== "nftables" && phase !== "none") return [];
    const get = (n: string) => facts.sysctls?.values.find((v) => v.name === n)?.value ?? null;
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
