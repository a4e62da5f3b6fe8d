import { rule } from "../rule.js";

const DEFAULT_TIMEOUTS = { tcp: 900, tcpFin: 120, udp: 300 };

export const ipvsTimeouts = rule({
  findings: { "ipvs-timeouts-set": { severity: "info", stage: "before" } },
  needs: ["configz", "ipvs"],
  evaluate({ facts, view: { phase } }) {
    if (phase !== "ipvs") return [];
    const c = facts.configz?.ipvs;
    const configured = [c?.tcpTimeout, c?.tcpFinTimeout, c?.udpTimeout].filter(
      (x) => x && x !== "0s" && x !== "0",
    );
    const t = facts.ipvs?.timeouts;
    const changed =
      t &&
      (t.tcp !== DEFAULT_TIMEOUTS.tcp ||
        t.tcpFin !== DEFAULT_TIMEOUTS.tcpFin ||
        t.udp !== DEFAULT_TIMEOUTS.udp);
    if (configured.length === 0 && !changed) return [];
    return [
      {
        id: "ipvs-timeouts-set",
        severity: "info",
        stage: "before",
        blocksMigration: false,
        title: "IPVS connection timeouts are tuned; nftables mode has no equivalent setting",
        evidence: {
          tcpTimeout: c?.tcpTimeout ?? null,
          tcpFinTimeout: c?.tcpFinTimeout ?? null,
          udpTimeout: c?.udpTimeout ?? null,
          kernel: t ? `${t.tcp} ${t.tcpFin} ${t.udp}` : null,
        },
        remedy:
          "Tune the equivalent conntrack timeouts (conntrack.tcpEstablishedTimeout, tcpCloseWaitTimeout, udpTimeout) if clients depended on them",
      },
    ];
  },
});
