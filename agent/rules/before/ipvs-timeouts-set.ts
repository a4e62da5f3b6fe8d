import { sysctlValue } from "../../facts/host.js";
import { rule } from "../rule.js";

// The kernel's IPVS defaults (ipvsadm(8) --set; net/netfilter/ipvs/ip_vs_proto_tcp.c, ESTABLISHED 15 min).
const DEFAULT_TIMEOUTS = { tcp: 900, tcpFin: 120, udp: 300 };
const EST = "net.netfilter.nf_conntrack_tcp_timeout_established";

/**
 * ipvs mode expires an idle established TCP connection after IPVS's tcp timeout (900 s unless tuned:
 * pkg/proxy/ipvs/proxier.go v1.34.4 NewProxier -> ConfigureTimeouts); nftables mode leaves the flow to
 * conntrack, whose established timeout kube-proxy sets in every mode (cmd/kube-proxy/app/server_linux.go
 * v1.34.4, conntrack.tcpEstablishedTimeout, 24 h by default). So idle flows IPVS cut now live on.
 */
export const ipvsTimeouts = rule({
  findings: { "ipvs-timeouts-set": { severity: "info", stage: "before" } },
  needs: ["configz", "ipvs", "sysctls"],
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
    const est = sysctlValue(facts.sysctls, EST);
    const conntrack = est === null ? null : Number(est);
    // At the defaults it is told only from both sides read: the node's IPVS timeout and conntrack's.
    const outlive = t != null && t.tcp > 0 && conntrack !== null && conntrack > t.tcp;
    if (configured.length === 0 && !changed && !outlive) return [];
    return [
      {
        id: "ipvs-timeouts-set",
        severity: "info",
        stage: "before",
        blocksMigration: false,
        title: outlive
          ? `IPVS idle timeouts have no nftables equivalent: idle established TCP connections IPVS cuts after ${t.tcp} s live up to ${conntrack} s under conntrack`
          : "IPVS connection timeouts are tuned; nftables mode has no equivalent setting",
        evidence: {
          tcpTimeout: c?.tcpTimeout ?? null,
          tcpFinTimeout: c?.tcpFinTimeout ?? null,
          udpTimeout: c?.udpTimeout ?? null,
          kernel: t ? `${t.tcp} ${t.tcpFin} ${t.udp}` : null,
          ipvsTcpIdleSeconds: t ? t.tcp : "not read",
          conntrackTcpEstablishedSeconds: conntrack ?? "not read",
        },
        remedy:
          "If clients or load balancers relied on IPVS cutting idle connections (or on a tuned IPVS timeout), set kube-proxy's conntrack.tcpEstablishedTimeout (and tcpCloseWaitTimeout, udpTimeout) to what they need; otherwise expect idle connections to stay open longer after the switch",
      },
    ];
  },
});
