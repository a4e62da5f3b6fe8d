import type { ProbeError } from "../facts/probe-error.js";
import { parseConntrackFlow, type ConntrackFlow } from "../parse/proc-net.js";
import { readLines } from "../../common/regular-file.js";

/**
 * One pass over <procRoot>/net/nf_conntrack: each entry's original direction goes to `keyOf`, and the
 * entries it names are counted by that key. A line that is no entry stops the count: a table read in
 * part is never a count.
 */
export async function countConntrackFlows(
  procRoot: string,
  keyOf: (f: ConntrackFlow) => string | null,
  maxBytes: number,
): Promise<{ ok: true; value: Map<string, number> } | { ok: false; error: ProbeError }> {
  const path = `${procRoot}/net/nf_conntrack`;
  const counts = new Map<string, number>();
  let lineNo = 0;
  let bad: string | null = null;
  const r = await readLines(
    path,
    (line) => {
      lineNo++;
      if (bad !== null || line === "") return;
      const p = parseConntrackFlow(line);
      if (!p.ok) {
        bad = `${path} line ${lineNo}: ${p.error}`;
        return;
      }
      const key = keyOf(p.value);
      if (key !== null) counts.set(key, (counts.get(key) ?? 0) + 1);
    },
    maxBytes,
  );
  if (!r.ok) return { ok: false, error: r.error };
  if (bad !== null) return { ok: false, error: { kind: "garbage", message: bad, command: path } };
  return { ok: true, value: counts };
}
