import { rule } from "../rule.js";

/**
 * A probe that could not read its part of the node leaves a hole no verdict may paper over: such a
 * node is never "ready" or "clean". kube-proxy's endpoints not answering is its own finding, and on a
 * kube-proxy-free node it is the expected answer, so those count only when /proxyMode did answer.
 */
export const scanIncomplete = rule({
  findings: { "scan-incomplete": { severity: "warning", stage: "any", tags: ["scan-incomplete"] } },
  needs: [],
  evaluate({ failedProbes, view: { phase, runningMode } }) {
    const relevant = [...failedProbes].filter(
      ([name]) => !name.startsWith("kube-proxy-") || runningMode !== null,
    );
    if (relevant.length === 0 || phase === "unknown") return [];
    return [
      {
        id: "scan-incomplete",
        severity: "warning",
        stage: "any",
        blocksMigration: false,
        title: `${relevant.length} probes could not read their part of this node; the verdict cannot be ready or clean`,
        evidence: { failedProbes: relevant.map(([name, e]) => `${name}: ${e.kind}: ${e.message}`) },
        remedy:
          "Fix what each probe names (a missing tool, a missing capability such as NET_ADMIN/NET_RAW, a timeout) and scan again",
      },
    ];
  },
});
