import type { ParityDiffer } from "./schema.js";

/** At most five of a list, and how many more. */
export const few = (xs: readonly string[]) =>
  `${xs.slice(0, 5).join(" ")}${xs.length > 5 ? ` (+${xs.length - 5})` : ""}`;

type Match = { ok: true } | { ok: false; why: string } | { ok: null; why: string };

/** Whether the agent's nftables endpoints are this expected set: yes, no (and why), or cannot tell. */
export function matchSet(d: ParityDiffer, expected: ReadonlySet<string>): Match {
  const after = d.after;
  if (after !== null && after.length === d.endpointsAfter) {
    const have = new Set(after);
    const missing = [...expected].filter((e) => !have.has(e)).sort();
    const extra = after.filter((e) => !expected.has(e));
    if (missing.length === 0 && extra.length === 0) return { ok: true };
    return {
      ok: false,
      why: [
        missing.length > 0 ? `ready in the EndpointSlices but not in nftables: ${few(missing)}` : "",
        extra.length > 0 ? `in nftables but not ready in the EndpointSlices: ${few(extra)}` : "",
      ]
        .filter(Boolean)
        .join("; "),
    };
  }
  // Only part of the list came (cut, or an older agent): a contradiction still proves a difference.
  const wrong = [...(after ?? []), ...d.added].filter((e) => !expected.has(e));
  const unserved = d.gone.filter((e) => expected.has(e));
  if (d.endpointsAfter !== expected.size || wrong.length > 0 || unserved.length > 0)
    return {
      ok: false,
      why: [
        d.endpointsAfter !== expected.size
          ? `${d.endpointsAfter} endpoint(s) in nftables, ${expected.size} ready in the EndpointSlices`
          : "",
        wrong.length > 0 ? `in nftables but not ready: ${few(wrong)}` : "",
        unserved.length > 0 ? `ready but no longer in nftables: ${few(unserved)}` : "",
      ]
        .filter(Boolean)
        .join("; "),
    };
  return {
    ok: null,
    why:
      after === null
        ? "the agent did not list its nftables endpoints (an older agent): the counts agree, the set is unproven"
        : `the agent listed ${after.length} of ${d.endpointsAfter} nftables endpoints: those agree, the rest is unproven`,
  };
}
