import type { ProbeError } from "../facts/probe-error.js";
import type { VirtualServer } from "../facts/ipvs.js";
import type { NodeFacts, Phase } from "../report/schema.js";
import { kubeIpvs0ServiceIps } from "./kube-ipvs0.js";
import { kubeProxyIpsets } from "./owned.js";

type Mode = "ipvs" | "iptables" | "nftables";

export interface PhaseDecision {
  phase: Phase;
  source: "proxyMode" | "kernel-state" | "none";
  /**
   * kube-proxy did not say its mode and the kernel holds kube-proxy state: the phase is a guess. No
   * remedy may then delete state unconditionally, and the verdict is never ready, clean or leftovers.
   */
  inferred: boolean;
  /** On a guess: the state that carries Service traffic, which the guess rests on. */
  carrying: { mode: Mode; evidence: string }[];
  mixed: { mode: Mode; evidence: string }[];
}

/** What /proxyMode answered, trimmed (possibly empty); null when it did not answer. */
export function answeredMode(f: Pick<NodeFacts, "proxyMode">): string | null {
  return f.proxyMode ? f.proxyMode.mode.trim() : null;
}

/** The mode kube-proxy says it runs; null when it did not answer or answered nothing. */
export function runningModeOf(f: Pick<NodeFacts, "proxyMode">): string | null {
  return answeredMode(f) || null;
}

/**
 * What each mode leaves in the kernel, as read by the probes. Virtual servers another service proxy made
 * (kube-router's, view/other-proxy.ts) are no kube-proxy mode's state.
 */
function modeEvidence(f: NodeFacts, others: readonly VirtualServer[] = []): PhaseDecision["mixed"] {
  const out: PhaseDecision["mixed"] = [];
  const vsCount = (f.ipvs?.virtualServerCount ?? 0) - others.length;
  if (vsCount > 0) {
    out.push({ mode: "ipvs", evidence: `${vsCount} IPVS virtual servers` });
  }
  if (f.kubeIpvs0?.present) {
    out.push({
      mode: "ipvs",
      evidence: `kube-ipvs0 present with ${kubeIpvs0ServiceIps(f.kubeIpvs0).length} addresses`,
    });
  }
  const kubeSets = kubeProxyIpsets(f) ?? [];
  if (kubeSets.length > 0)
    out.push({ mode: "ipvs", evidence: `${kubeSets.length} of kube-proxy's ipvs-mode ipsets` });
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
 * State that carries Service traffic, per mode, as opposed to state that merely exists: kube-proxy's IPVS
 * virtual servers with real servers (a Service IP on kube-ipvs0 — ipvs mode always makes that link, so
 * without it the virtual servers are someone else's), the nftables table's Service maps with elements,
 * iptables mode's per-Service chains. A mode whose part of the kernel was not read is "unread", never
 * "carries nothing".
 */
function carryingState(
  f: NodeFacts,
  others: readonly VirtualServer[] = [],
): { carrying: PhaseDecision["carrying"]; unread: Set<Mode> } {
  const carrying: PhaseDecision["carrying"] = [];
  const unread = new Set<Mode>();
  if (f.ipvs === null) unread.add("ipvs");
  else {
    const serviceIPs = f.kubeIpvs0 ? new Set(kubeIpvs0ServiceIps(f.kubeIpvs0)) : null;
    // Another proxy's virtual servers carry its Services, not kube-proxy's, even on a kube-ipvs0 left behind.
    const theirs = new Set(others);
    const live = f.ipvs.virtualServers.filter(
      (v) =>
        !theirs.has(v) &&
        v.realServers > 0 &&
        (serviceIPs === null || (v.address !== null && serviceIPs.has(v.address))),
    );
    if (live.length > 0)
      carrying.push({
        mode: "ipvs",
        evidence: `${live.length} IPVS virtual servers ${serviceIPs === null ? "(kube-ipvs0 not read)" : "for Service IPs on kube-ipvs0"} with real servers`,
      });
  }
  if (f.nftables === null) unread.add("nftables");
  else {
    for (const t of f.nftables.kubeProxy) {
      const n = t.sets
        .filter((x) => x.name === "service-ips" || x.name === "service-nodeports")
        .reduce((a, x) => a + x.elements, 0);
      if (n > 0)
        carrying.push({
          mode: "nftables",
          evidence: `table ${t.family} ${t.name}: ${n} Service map elements`,
        });
    }
  }
  if (f.iptables === null) unread.add("iptables");
  else {
    for (const b of f.iptables.backends) {
      // As in modeEvidence: an unread backend is evidence of nothing (scan-incomplete names it).
      if (!b.read) continue;
      const n = Object.values(b.patternCounts).reduce((a, c) => a + c, 0);
      if (n > 0)
        carrying.push({
          mode: "iptables",
          evidence: `${n} per-Service chains in ${b.family} iptables (${b.backend})`,
        });
    }
  }
  return { carrying, unread };
}

/**
 * The phase when kube-proxy does not answer: what carries traffic outweighs what merely exists. Live IPVS
 * virtual servers win (kube-proxy in nftables mode flushes the IPVS table on every start, DESIGN.md, so
 * they were synced since), then the newest mode; a mode whose part of the kernel was not read and that
 * could outrank the winner makes it unknown. State with nothing carrying traffic: no mode is programming
 * Services here ("none"), and all of it is left behind.
 */
function guessPhase(
  f: NodeFacts,
  evidence: PhaseDecision["mixed"],
  others: readonly VirtualServer[],
): { phase: Phase; carrying: PhaseDecision["carrying"] } {
  const { carrying, unread } = carryingState(f, others);
  const modes = new Set(carrying.map((c) => c.mode));
  const seen = new Set(evidence.map((e) => e.mode));
  const order: Mode[] = ["ipvs", "nftables", "iptables"];
  const winner = order.find((m) => modes.has(m));
  if (winner === undefined) return { phase: unread.size > 0 ? "unknown" : "none", carrying };
  // Unread IPVS outranks only where ipvs state is seen; unread nftables or iptables state may be anything.
  const outranked = order
    .slice(0, order.indexOf(winner))
    .some((m) => unread.has(m) && (m !== "ipvs" || seen.has("ipvs")));
  return { phase: outranked ? "unknown" : winner, carrying };
}

/**
 * kube-proxy's own /proxyMode decides; kernel state only when kube-proxy does not answer. Never the
 * ConfigMap: the mode configured and the mode running differ exactly when it matters. `others`: the
 * virtual servers another service proxy made, which say nothing about kube-proxy.
 */
export function decidePhase(
  f: NodeFacts,
  failedProbes: ReadonlyMap<string, ProbeError>,
  answered: string | null = runningModeOf(f),
  others: readonly VirtualServer[] = [],
): PhaseDecision {
  const evidence = modeEvidence(f, others);
  if (answered) {
    const phase: Phase =
      answered === "ipvs" || answered === "iptables" || answered === "nftables" ? answered : "unknown";
    return {
      phase,
      source: "proxyMode",
      inferred: false,
      carrying: [],
      mixed: evidence.filter((e) => e.mode !== phase),
    };
  }
  const modes = new Set(evidence.map((e) => e.mode));
  if (modes.size === 0) {
    // No state of any mode: kube-proxy-free, unless the probes that would have seen state failed, or
    // something answers on kube-proxy's port without making sense (a broken kube-proxy is not absent).
    const none = { inferred: false, carrying: [], mixed: [] };
    if (KERNEL_PROBES.some((p) => failedProbes.has(p))) return { phase: "unknown", source: "none", ...none };
    const mode = failedProbes.get("kube-proxy-mode");
    if (mode !== undefined && mode.kind !== "unreachable")
      return { phase: "unknown", source: "none", ...none };
    return { phase: "none", source: "kernel-state", ...none };
  }
  const { phase, carrying } = guessPhase(f, evidence, others);
  return {
    phase,
    source: "kernel-state",
    inferred: true,
    carrying,
    mixed: evidence.filter((e) => e.mode !== phase),
  };
}
