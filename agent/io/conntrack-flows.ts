import type { ProbeError } from "../facts/probe-error.js";
import { parseConntrackFlow, type ConntrackFlow } from "../parse/proc-net.js";
import { readLines } from "../../common/regular-file.js";

type Counted = { ok: true; value: Map<string, number> } | { ok: false; error: ProbeError };
type KeyOf = (f: ConntrackFlow) => string | null;
/** A reader's counts by its key: from the scan's one pass (ConntrackPass), or a read of its own. */
export type CountFlows = (keyOf: KeyOf) => Promise<Counted>;

/**
 * One pass over <procRoot>/net/nf_conntrack: each entry's original direction goes to every `keyOf`, and
 * the entries each names are counted by that key, apart per `keyOf`. A line that is no entry stops the
 * count: a table read in part is never a count.
 */
async function countFlowsBy(
  procRoot: string,
  keyOfs: readonly KeyOf[],
  maxBytes: number,
): Promise<{ ok: true; value: Map<string, number>[] } | { ok: false; error: ProbeError }> {
  const path = `${procRoot}/net/nf_conntrack`;
  const counts = keyOfs.map(() => new Map<string, number>());
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
      for (let i = 0; i < keyOfs.length; i++) {
        const key = keyOfs[i]!(p.value);
        if (key !== null) counts[i]!.set(key, (counts[i]!.get(key) ?? 0) + 1);
      }
    },
    maxBytes,
  );
  if (!r.ok) return { ok: false, error: r.error };
  if (bad !== null) return { ok: false, error: { kind: "garbage", message: bad, command: path } };
  return { ok: true, value: counts };
}

/** One pass over nf_conntrack for one reader: its entries counted by `keyOf`. */
export async function countConntrackFlows(
  procRoot: string,
  keyOf: KeyOf,
  maxBytes: number,
): Promise<Counted> {
  const r = await countFlowsBy(procRoot, [keyOf], maxBytes);
  return r.ok ? { ok: true, value: r.value[0]! } : r;
}

/**
 * One read of nf_conntrack for every probe of a scan wave that counts in it (the listeners' health-check
 * connections and the service-conntrack probe's flows): the table can hold 500,000 entries, and each
 * reader streamed it on its own before. The read starts when every expected reader has asked for its
 * counts or finished without asking; each gets the counts of its own keys, or the same failure.
 */
export class ConntrackPass {
  readonly #waiting: Set<string>;
  readonly #asked: { keyOf: KeyOf; done: (r: Counted) => void; fail: (e: unknown) => void }[] = [];

  constructor(
    private readonly procRoot: string,
    private readonly maxBytes: number,
    readers: Iterable<string>,
  ) {
    this.#waiting = new Set(readers);
  }

  /** Reader `name`'s counts by `keyOf`, from the one read this pass makes. */
  count(name: string, keyOf: KeyOf): Promise<Counted> {
    // A reader the pass did not expect (or one asking twice) reads on its own rather than wait.
    if (!this.#waiting.has(name)) return countConntrackFlows(this.procRoot, keyOf, this.maxBytes);
    const answer = new Promise<Counted>((done, fail) => this.#asked.push({ keyOf, done, fail }));
    this.#waiting.delete(name);
    this.#startWhenAllAsked();
    return answer;
  }

  /** Reader `name` finished (whether or not it asked): the pass no longer waits for it. */
  finished(name: string): void {
    if (this.#waiting.delete(name)) this.#startWhenAllAsked();
  }

  #startWhenAllAsked(): void {
    if (this.#waiting.size > 0 || this.#asked.length === 0) return;
    const readers = this.#asked.splice(0);
    void countFlowsBy(
      this.procRoot,
      readers.map((r) => r.keyOf),
      this.maxBytes,
    ).then(
      (r) => readers.forEach((reader, i) => reader.done(r.ok ? { ok: true, value: r.value[i]! } : r)),
      // A key function that throws fails every reader of the pass, as it failed its own read before.
      (e: unknown) => readers.forEach((reader) => reader.fail(e)),
    );
  }
}
