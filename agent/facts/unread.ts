import type { ProbeError } from "./probe-error.js";
import type { NodeFacts, ProbeName } from "./sources.js";

/** A part of the node a probe ran for but could not read: an iptables backend, a sysctl.d file. */
export interface UnreadPart {
  probe: ProbeName;
  part: string;
  why: ProbeError;
}

/**
 * Every part the facts hold as unread. A probe with one is not a success: the report marks it failed
 * with these reasons, so no verdict, verify check, cleanup plan or metric takes the hole for "none".
 */
export function unreadParts(f: NodeFacts): UnreadPart[] {
  const out: UnreadPart[] = [];
  for (const b of f.iptables?.backends ?? [])
    if (!b.read) out.push({ probe: "iptables", part: `${b.backend} ${b.family}`, why: b.why });
  for (const c of f.sysctlConfig?.files ?? [])
    if (!c.read) out.push({ probe: "sysctl-config", part: c.path, why: c.why });
  return out;
}

/** The probe failure an unread part stands for: the first part's kind, every part named. */
export function partialFailure(parts: readonly UnreadPart[]): ProbeError | null {
  const [first] = parts;
  if (first === undefined) return null;
  return {
    kind: first.why.kind,
    message: `read only in part; not read: ${parts.map((p) => `${p.part} (${p.why.kind}: ${p.why.message})`).join("; ")}`,
    ...(first.why.command !== undefined ? { command: first.why.command } : {}),
  };
}
