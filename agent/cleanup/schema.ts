import { z } from "zod";
import { TOOLS, type ToolName } from "../io/tools.js";
import { Verdict } from "../report/schema.js";

const ToolNameSchema = z.enum(Object.keys(TOOLS) as [ToolName, ...ToolName[]]);

const CleanupStep = z.enum([
  "iptables-delete-jump",
  "iptables-flush-chain",
  "iptables-delete-chain",
  "ipset-destroy",
  "ipvs-clear",
  "ipvs-delete-service",
  "link-delete",
  "sysctl-reset",
]);
type CleanupStep = z.infer<typeof CleanupStep>;

export const CleanupAction = z.object({
  step: CleanupStep,
  /** What it removes, e.g. "legacy ipv4 nat/KUBE-SERVICES" or "TCP 10.96.0.1:443". */
  target: z.string(),
  run: z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("exec"), tool: ToolNameSchema, args: z.array(z.string()) }),
    z.object({ kind: z.literal("sysctl"), name: z.string(), value: z.string() }),
  ]),
  /** The same action as the command a person would type. */
  command: z.string(),
});
export type CleanupAction = z.infer<typeof CleanupAction>;

/** Something that looks like a leftover but is left alone, and why. */
export const KeptItem = z.object({ what: z.string(), why: z.string() });
export type KeptItem = z.infer<typeof KeptItem>;

export const CleanupPlan = z.object({
  actions: z.array(CleanupAction),
  kept: z.array(KeptItem),
  /** Parts of the node that could not be read: what they hold is unknown, so "nothing to remove" is never said. */
  unread: z.array(KeptItem),
});
export type CleanupPlan = z.infer<typeof CleanupPlan>;

export const ActionResult = z.object({
  action: CleanupAction,
  ok: z.boolean(),
  error: z.string().nullable(),
  durationMs: z.number(),
});
export type ActionResult = z.infer<typeof ActionResult>;

const ScanSummary = z.object({
  verdict: Verdict,
  phase: z.string(),
  /** Finding ids with their severity, e.g. "critical kube-ipvs0-black-hole". */
  findings: z.array(z.string()),
});

export const CleanupOutcome = z.object({
  schemaVersion: z.literal("1"),
  node: z.string(),
  /** dry-run: nothing changed; refused: --apply given but the interlock said no; applied: actions ran. */
  mode: z.enum(["dry-run", "refused", "applied"]),
  refusal: z.string().nullable(),
  before: ScanSummary,
  plan: CleanupPlan,
  results: z.array(ActionResult),
  after: ScanSummary.nullable(),
});
export type CleanupOutcome = z.infer<typeof CleanupOutcome>;
export type ScanSummary = z.infer<typeof ScanSummary>;
