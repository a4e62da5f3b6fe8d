import { compareVersions } from "../../parse/versions.js";
import { describeCounter, readCounter } from "../../view/counters.js";
import { BEFORE_SWITCH, nextModeIsIptables, rule, type RuleFinding } from "../rule.js";
import { sysctlValue } from "../../facts/host.js";

const COUNTER = "kubeproxy_iptables_ct_state_invalid_dropped_packets_total";

export const conntrackWorkaround = rule({
  findings: {
    "conntrack-workaround-relied-on": {
      severity: "warning",
      stage: "before",
      tags: ["measure-before-switch"],
    },
  },
  needs: ["kubeProxyMetrics", "kernel", "sysctls", "configz"],
  evaluate({ facts, view }) {
    const { phase, runningMode } = view;
    // iptables mode, the next mode below kernel 5.13, installs the INVALID-drop workaround itself (and skips
    // it when the sysctl is set): nothing is lost there (pkg/proxy/iptables/proxier.go conntrackTCPLiberal).
    if (!BEFORE_SWITCH.has(phase) || nextModeIsIptables(view)) return [];
    const out: RuleFinding<"conntrack-workaround-relied-on">[] = [];
    const r = readCounter(facts, runningMode, COUNTER);
    const k = facts.kernel;
    const oldKernel = k !== null && compareVersions([k.major, k.minor], [6, 1]) < 0;
    const liberal = sysctlValue(facts.sysctls, "net.netfilter.nf_conntrack_tcp_be_liberal");
    const dropped = r.state === "value" ? r.value : 0;
    // kube-proxy's own conntrack.tcpBeLiberal (KubeProxyConntrackConfiguration.TCPBeLiberal, json
    // "tcpBeLiberal") is the remedy this finding asks for, already in place: it sets the sysctl in every
    // mode, so nothing is relied on that the switch would lose (view.notCounted says it was seen).
    if (facts.configz?.conntrackTcpBeLiberal === true) return [];
    if ((dropped > 0 && oldKernel) || liberal === "1") {
      out.push({
        id: "conntrack-workaround-relied-on",
        severity: "warning",
        stage: "before",
        blocksMigration: false,
        title:
          dropped > 0
            ? `${dropped} packets dropped as conntrack-invalid on kernel ${k?.release}: nftables mode does not install that workaround`
            : "nf_conntrack_tcp_be_liberal is set on this node",
        evidence: {
          [COUNTER]: describeCounter(r),
          kernel: k?.release ?? null,
          nf_conntrack_tcp_be_liberal: liberal ?? null,
        },
        remedy:
          "Carry the workaround into nftables mode: conntrack.tcpBeLiberal: true (--conntrack-tcp-be-liberal)",
      });
    }
    return out;
  },
});
