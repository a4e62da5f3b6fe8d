import type { PlanStatus } from "../report/schema.js";

// The page's colour classes (c-<tone>, b-<tone>, t-<tone> in html-assets.ts) for each value a chip,
// a bar or a tile shows, and the sort keys of the columns that are not alphabetical.

export type Tone = "good" | "meh" | "bad" | "info" | "none";
export const VERDICT_TONE: Record<string, Tone> = {
  ready: "good",
  clean: "good",
  attention: "meh",
  leftovers: "meh",
  blocked: "bad",
  unhealthy: "bad",
  unknown: "none",
  "no-report": "bad",
};
export const PHASE_TONE: Record<string, Tone> = {
  ipvs: "meh",
  iptables: "info",
  nftables: "good",
  none: "good",
  unknown: "none",
  "no-report": "bad",
};
export const STATUS_TONE: Record<PlanStatus, Tone> = {
  done: "good",
  todo: "meh",
  blocked: "bad",
  "n/a": "none",
};
export const SEV_TONE: Record<string, Tone> = { critical: "bad", error: "bad", warning: "meh", info: "info" };
// Sort keys for the columns that are not alphabetical: worst first.
export const VERDICT_RANK: Record<string, number> = {
  unhealthy: 0,
  blocked: 1,
  "no-report": 2,
  unknown: 3,
  leftovers: 4,
  attention: 5,
  ready: 6,
  clean: 7,
};
export const SEV_RANK: Record<string, number> = { critical: 0, error: 1, warning: 2, info: 3, "": 4 };
/** Phases that are off ipvs: the migration's numerator. */
export const OFF_IPVS = new Set(["nftables", "iptables", "none"]);

export const pct = (n: number, of: number) => (of === 0 ? 0 : Math.round((100 * n) / of));
