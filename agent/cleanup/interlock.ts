import type { NodeReport } from "../report/schema.js";
import { answeredMode } from "../view/phase.js";

export type Interlock = { ok: true } | { ok: false; reason: string };

/**
 * Cleanup may change the node only when kube-proxy on it says, on /proxyMode, that it runs nftables
 * mode: removing ipvs state under a kube-proxy that still uses it takes the node's Services down,
 * and "could not ask" is treated as "no".
 */
export function applyAllowed(report: NodeReport): Interlock {
  const mode = answeredMode(report.facts);
  if (mode === "nftables") return { ok: true };
  if (mode !== null) {
    return {
      ok: false,
      reason: `kube-proxy on this node answers ${JSON.stringify(mode)} on /proxyMode, not "nftables": its ${mode === "ipvs" ? "ipvs" : "current"} state is in use. Switch this node to nftables mode first.`,
    };
  }
  const probe = report.probes.find((p) => p.name === "kube-proxy-mode");
  const why =
    probe === undefined
      ? "no /proxyMode probe ran"
      : `/proxyMode was not read (${probe.error?.kind ?? "failed"}: ${probe.error?.message ?? "no answer"})`;
  return {
    ok: false,
    reason: `cannot tell which mode kube-proxy runs on this node: ${why}. Nothing is changed unless kube-proxy answers nftables.`,
  };
}
