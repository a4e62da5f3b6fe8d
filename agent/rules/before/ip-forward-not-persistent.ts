import { forwardingSetAtStartBy } from "../../view/forwarding-setters.js";
import { rule } from "../rule.js";
import { sysctlValue } from "../../facts/host.js";

// kube-proxy's ipvs mode sets net.ipv4.ip_forward=1 every time it starts (pkg/proxy/ipvs/proxier.go
// NewProxier: proxyutil.EnsureSysctl(sysctl, sysctlForward, 1)); nftables mode sets no sysctl at all
// (pkg/proxy/nftables/proxier.go NewProxier takes no sysctl interface). The value stays until a reboot:
// then only the persistent configuration (sysctl.d(5)) or another agent sets it again.
const FILE = "/etc/sysctl.d/99-kubernetes-ip-forward.conf";
const LINE = "net.ipv4.ip_forward = 1";
// Forwarding is on when this fires: nothing to apply now. `sysctl --system` would re-apply every file and
// undo what network plugins set at runtime.
const NOW_ON = "Nothing to apply now (forwarding is on): the file is what the next boot reads";

// The file to add only wins when it is read after whatever sets 0 now: sysctl.d files apply in name
// order, /etc/sysctl.conf after all of them.
function fixFor(source: { path: string; line: number } | null): string {
  const name = FILE.slice(FILE.lastIndexOf("/") + 1);
  if (source !== null) {
    const base = source.path.slice(source.path.lastIndexOf("/") + 1);
    if (source.path === "/etc/sysctl.conf" || base > name)
      return `Change ${source.path} line ${source.line} to "${LINE}" (a file in /etc/sysctl.d would be applied before it and lose). ${NOW_ON}`;
  }
  return `Add ${FILE} containing "${LINE}". ${NOW_ON}`;
}

export const ipForwardNotPersistent = rule({
  findings: { "ip-forward-not-persistent": { severity: "warning", stage: "before" } },
  needs: ["sysctls", "sysctlConfig"],
  evaluate({ facts, view: { runningMode }, failedProbes }) {
    // Only ipvs mode sets it, and only kube-proxy's own answer says it runs that; with any config file
    // unread, "nothing sets it" is not known.
    if (runningMode !== "ipvs" || failedProbes.has("sysctl-config") || facts.sysctlConfig === null) return [];
    const now = sysctlValue(facts.sysctls, "net.ipv4.ip_forward");
    if (now !== "1") return [];
    const s = facts.sysctlConfig.settings.find((x) => x.name === "net.ipv4.ip_forward");
    if (s === undefined || s.value === "1") return [];
    const setBy = s.source === null ? null : `${s.source.path}:${s.source.line} (${s.source.key})`;
    // Forwarding comes back at boot when one of these starts: the node then depends on it, not on kube-proxy.
    const setAtStartBy = forwardingSetAtStartBy(facts);
    const after =
      setAtStartBy.length === 0
        ? "so the node stops forwarding after its next reboot"
        : `so after a reboot it is on only once ${setAtStartBy.join(" or ")} has started and set it`;
    return [
      {
        id: "ip-forward-not-persistent",
        severity: "warning",
        stage: "before",
        blocksMigration: false,
        title:
          s.value === null
            ? `net.ipv4.ip_forward is 1 now but no sysctl.d file sets it: kube-proxy's ipvs mode sets it on every start, nftables mode does not, ${after}`
            : `net.ipv4.ip_forward is 1 now but ${setBy} sets it to ${s.value} at boot: kube-proxy's ipvs mode sets it back on every start, nftables mode does not, ${after}`,
        evidence: {
          running: now,
          persistent: s.value,
          setBy,
          filesRead: facts.sysctlConfig.files.filter((f) => f.read).length,
          setAtStartBy,
        },
        remedy:
          `${fixFor(s.source)}. Calico (Felix ipForwarding, on by default), Cilium and dockerd set it when they start, ` +
          "and the CNI bridge plugin (Flannel's) when it sets up a pod; the file makes forwarding not depend on them or on start order",
      },
    ];
  },
});
