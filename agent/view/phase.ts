import type { ProbeError } from "../facts/probe-error.js";
import type { NodeFacts, Phase } from "../report/schema.js";
import { kubeProxyIpsets } from "./owned.js";

export interface PhaseDecision {
  phase: Phase;
  source: "proxyMode" | "kernel-state" | "none";
  mixed: { mode: "ipvs" | "iptables" | "nftables"; evidence: string }[];
}

/** What /proxyMode answered, trimmed (possibly empty); null when it did not answer. */
export function answeredMode(f: Pick<NodeFacts, "proxyMode">): string | null {
  return f.proxyMode ? f.proxyMode.mode.trim() : null;
}

/** The mode kube-proxy says it runs; null when it did not answer or answered nothing. */
export function runningModeOf(f: Pick<NodeFacts, "proxyMode">): string | null {
  return answeredMode(f) || null;
}

/** What each mode leaves in the kernel, as read by the probes. */
export function modeEvidence(f: NodeFacts): PhaseDecision["mixed"] {
  const out: PhaseDecision["mixed"] = [];
  if (f.ipvs && f.ipvs.virtualServerCount > 0) {
    out.push({ mode: "ipvs", evidence: `${f.ipvs.virtualServerCount} IPVS virtual servers` });
  }
  if (f.kubeIpvs0?.present) {
    out.push({ mode: "ipvs", evidence: `kube-ipvs0 present with ${f.kubeIpvs0.addresses.length} addresses` });
  }
  const kubeSets = kubeProxyIpsets(f) ?? [];
  if (kubeSets.length > 0) out.push({ mode: "ipvs", evidence: `${kubeSets.length} KUBE-* ipsets` });
  for (const b of f.iptables?.backends ?? []) {
    // An unread backend is evidence of nothing; the report marks the iptables probe incomplete.
    if (!b.read) continue;
    const ipvsChains = b.kubeChains.filter((c) => c.owner === "kube-proxy-ipvs");
    if (ipvsChains.length > 0) {
      out.push({
        mode: "ipvs",
        evidence: `${ipvsChains.length} chains only ipvs mode creates, in ${b.family} iptables (${b.backend})`,
      });
    }
    const svc = Object.entries(b.patternCounts).reduce((n, [, c]) => n + c, 0);
    const canary = b.kubeChains.some((c) => c.owner === "kube-proxy-iptables");
    if (svc > 0 || canary) {
      out.push({
        mode: "iptables",
        evidence: `${svc} per-Service chains, iptables-mode chains in ${b.family} iptables (${b.backend})`,
      });
    }
  }
  for (const t of f.nftables?.kubeProxy ?? []) {
    out.push({ mode: "nftables", evidence: `table ${t.family} ${t.name} (${t.chains.total} chains)` });
  }
  return out;
}

const KERNEL_PROBES = ["ipvs", "kube-ipvs0", "iptables", "nftables"] as const;

/**
 * kube-proxy's own /proxyMode decides; kernel state only when kube-proxy does not answer. Never the
 * ConfigMap: the mode configured and the mode running differ exactly when it matters.
 */
export function decidePhase(
  f: NodeFacts,
  failedProbes: ReadonlyMap<string, ProbeError>,
  answered: string | null = runningModeOf(f),
): PhaseDecision {
  const evidence = modeEvidence(f);
  if (answered) {
    const phase: Phase =
      answered === "ipvs" || answered === "iptables" || answered === "nftables" ? answered : "unknown";
    return { phase, source: "proxyMode", mixed: evidence.filter((e) => e.mode !== phase) };
  }
  const modes = new Set(evidence.map((e) => e.mode));
  if (modes.size === 0) {
    // No state of any mode: kube-proxy-free, unless the probes that would have seen state failed, or
    // something answers on kube-proxy's port without making sense (a broken kube-proxy is not absent).
    if (KERNEL_PROBES.some((p) => failedProbes.has(p)))
      return { phase: "unknown", source: "none", mixed: [] };
    const mode = failedProbes.get("kube-proxy-mode");
    if (mode !== undefined && mode.kind !== "unreachable")
      return { phase: "unknown", source: "none", mixed: [] };
    return { phase: "none", source: "kernel-state", mixed: [] };
  }
  // Several modes' state with no kube-proxy to ask: the newest mode is the likeliest to be running.
  const phase: Phase = modes.has("nftables") ? "nftables" : modes.has("ipvs") ? "ipvs" : "iptables";
  return { phase, source: "kernel-state", mixed: evidence.filter((e) => e.mode !== phase) };
}
