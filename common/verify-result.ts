// The answer of the agent's GET /verify and of `proxyscope-agent verify --json`: the collector reads it too.
import { z } from "zod";
import { parseBoundedJson } from "./bounded-json.js";

const CheckStatus = z.enum(["ok", "fail", "not-run", "skipped"]);

/** The lines this release writes. An open set: a newer agent may send more (docs/compatibility.md). */
const VERIFY_CHECK_IDS = [
  "proxy-mode",
  "ipvs-virtual-servers",
  "kube-ipvs0",
  "kube-proxy-ipsets",
  "kube-proxy-iptables-chains",
  "nftables-table",
  "sync-failures",
  "last-sync",
  "service-connect",
  "service-parity",
  "nodeport-addresses",
  "nodeport-connect",
  "ipvs-virtual-servers-present",
  "kube-ipvs0-service-ips",
  "nftables-table-left",
  "scan-complete",
] as const;

export const VerifyCheck = z.object({
  /** Stable: scripts and the collector key on it. */
  id: z.enum(VERIFY_CHECK_IDS),
  name: z.string(),
  /** not-run fails the verification like fail does; skipped only with an explicit --skip-connect,
   *  for parity when nothing can be compared (no --parity-snapshot, none taken, too old: said in detail),
   *  and for the NodePort connect when not asked (--nodeport-connect) or no NodePort exists. */
  status: CheckStatus,
  /** Why it failed or was not run; a short note when it passed. */
  detail: z.string().nullable(),
});
export type VerifyCheck = z.infer<typeof VerifyCheck>;

export const VerifyResult = z.object({
  schemaVersion: z.literal("1"),
  node: z.string(),
  checkedAt: z.string().datetime(),
  passed: z.boolean(),
  checks: z.array(VerifyCheck),
});
export type VerifyResult = z.infer<typeof VerifyResult>;

export function checkFails(c: VerifyCheck): boolean {
  return c.status === "fail" || c.status === "not-run";
}

/**
 * What a reader accepts: any line id, so a line added by a newer agent (`service-parity` was one) does
 * not make an older collector refuse the whole answer. Status and the rest stay strict: `passed` is the
 * agent's own judgement, and a status this reader cannot word would be a breaking change.
 */
export const VerifyAnswer = VerifyResult.extend({
  checks: z.array(VerifyCheck.extend({ id: z.string() })),
});
export type VerifyAnswer = z.infer<typeof VerifyAnswer>;

const KNOWN_CHECKS: ReadonlySet<string> = new Set(VERIFY_CHECK_IDS);

/** About 20 checks of ~10 fields each today; a wide margin for newer agents' lines and details. */
const VERIFY_ANSWER_BOUNDS = { maxElements: 10_000, maxDepth: 16 };

/** A /verify body, read: the answer and the line ids this release does not know, or why it is none. */
export function readVerifyAnswer(
  body: string,
): { ok: true; result: VerifyAnswer; unknownChecks: string[] } | { ok: false; error: string } {
  // A verify answer is a few dozen lines: a hostile one of many small objects is refused uncounted by
  // zod, which would name every missing field of every one (a heap far larger than the answer).
  const read = parseBoundedJson(body, VERIFY_ANSWER_BOUNDS);
  if (!read.ok)
    return { ok: false, error: read.kind === "not-json" ? "not JSON" : `answer too large: ${read.message}` };
  const parsed = VerifyAnswer.safeParse(read.doc);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    return {
      ok: false,
      error: `not a verify result: ${i ? `${i.path.join(".") || "(root)"}: ${i.message}` : "invalid"}`.slice(
        0,
        300,
      ),
    };
  }
  return {
    ok: true,
    result: parsed.data,
    unknownChecks: parsed.data.checks.filter((c) => !KNOWN_CHECKS.has(c.id)).map((c) => c.id),
  };
}
