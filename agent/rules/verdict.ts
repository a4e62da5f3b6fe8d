import type { Finding, Phase, Verdict } from "../report/schema.js";
import { LEFTOVER_IDS, SCAN_INCOMPLETE_IDS, WHY_MOVE_IDS } from "./catalogue.js";

/**
 * Before the switch (ipvs, iptables): unhealthy (broken now) / blocked / attention / ready. After it (nftables, or no
 * kube-proxy): unhealthy / leftovers / attention / clean — clean only with no finding of warning or above at all;
 * a warning that is neither broken nor left over (one family's kube-proxy table missing) is attention, the
 * verdict's word for "look at this" before the switch too. A node we cannot place, or could not read in full
 * after the switch, is unknown, never "ready" or "clean". On a phase inferred from kernel state (kube-proxy
 * did not say its mode) the verdict is unknown — never "leftovers", which would make deletion the thing to
 * do — unless something is broken whatever runs there (a critical finding such as a black hole).
 */
/**
 * Broken now, whatever the phase: kube-proxy's rules stale or failing, its health check down, a black hole.
 * Why the node should move (the deprecation, however near its removal) is never "broken". The collector
 * reads it too: a node unhealthy only through findings the team accepted does not fail its CI.
 */
// `stage` is optional for the fleet's older reports; without it an error counts as broken.
export const breaksNow = (f: {
  id: string;
  severity: Finding["severity"];
  stage?: Finding["stage"] | undefined;
}): boolean =>
  !WHY_MOVE_IDS.has(f.id) && (f.severity === "critical" || (f.stage !== "before" && f.severity === "error"));

export function decideVerdict(phase: Phase, findings: readonly Finding[], inferred = false): Verdict {
  if (inferred || phase === "unknown")
    return findings.some((f) => f.severity === "critical") ? "unhealthy" : "unknown";
  const broken = findings.some(breaksNow);
  if (phase === "ipvs" || phase === "iptables") {
    // Broken now is worse than "plan something": before the switch too.
    if (broken) return "unhealthy";
    if (findings.some((f) => f.blocksMigration)) return "blocked";
    const inTheWay = findings.filter((f) => !WHY_MOVE_IDS.has(f.id));
    if (inTheWay.some((f) => f.severity !== "info")) return "attention";
    return "ready";
  }
  if (broken) return "unhealthy";
  if (findings.some((f) => LEFTOVER_IDS.has(f.id))) return "leftovers";
  if (findings.some((f) => SCAN_INCOMPLETE_IDS.has(f.id))) return "unknown";
  if (findings.some((f) => !WHY_MOVE_IDS.has(f.id) && f.severity !== "info")) return "attention";
  return "clean";
}
