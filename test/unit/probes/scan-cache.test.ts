import t from "tap";
import { cacheKey, newScanShared, ScanCache } from "../../../agent/probes/scan-cache.js";
import type { GenerationRead } from "../../../agent/io/nft-generation.js";

// The reuse rules of agent/probes/scan-cache.ts on a clock the test moves: a read is reused only
// under the nf_tables generation it started and ended under, within the full-read interval.

const gen = (generation: number): GenerationRead => ({ ok: true, generation });
const unknown: GenerationRead = {
  ok: false,
  error: { kind: "missing-tool", message: "proxyscope-nft-generation not found" },
};

t.test("reused while the generation stands still, read again when it moves", async (t) => {
  let now = 2_000_000;
  const c = new ScanCache(600_000, () => now);
  t.match(c.lookup("nftables", cacheKey(gen(7), "table kube-proxy")), { hit: false, why: /first read/ });
  t.ok(
    c.store("nftables", cacheKey(gen(7), "table kube-proxy"), cacheKey(gen(7), "table kube-proxy"), "A", now),
  );
  now += 60_000;
  t.match(c.lookup("nftables", cacheKey(gen(7), "table kube-proxy")), {
    hit: true,
    value: "A",
    readAtMs: 2_000_000,
  });
  t.match(c.lookup("nftables", cacheKey(gen(8), "table kube-proxy")), {
    hit: false,
    why: /nf_tables changed since the last read \(generation 7 table kube-proxy -> generation 8/,
  });
  t.match(
    c.lookup("nftables", cacheKey(gen(7), "table kp2")),
    { hit: false, why: /changed/ },
    "another table: another read",
  );
  now += 540_000;
  t.match(c.lookup("nftables", cacheKey(gen(7), "table kube-proxy")), {
    hit: false,
    why: /full-read interval/,
  });
});

t.test("an unknown generation is never unchanged, and a read across a change is not kept", async (t) => {
  const now = 2_000_000;
  const c = new ScanCache(600_000, () => now);
  t.notOk(c.store("x", cacheKey(unknown), cacheKey(unknown), "A", now), "unknown before and after: not kept");
  t.match(c.lookup("x", cacheKey(unknown)), { hit: false, why: /generation unknown: missing-tool/ });
  t.ok(c.store("x", cacheKey(gen(1)), cacheKey(gen(1)), "A", now));
  t.match(
    c.lookup("x", cacheKey(unknown)),
    { hit: false, why: /unknown/ },
    "a known entry, an unknown now: read",
  );
  t.notOk(c.store("x", cacheKey(gen(1)), cacheKey(gen(2)), "B", now), "the generation moved during the read");
  t.match(
    c.lookup("x", cacheKey(gen(1))),
    { hit: false, why: /first read/ },
    "and the older entry is dropped too",
  );
  t.notOk(c.store("x", cacheKey(gen(3)), cacheKey(unknown), "C", now), "unknown after the read: not kept");
  t.match(c.lookup("x", cacheKey(gen(3))), { hit: false, why: /first read/ });
});

t.test("a scan reads the generation once at its start, and again each time it asks for now", async (t) => {
  let calls = 0;
  const shared = newScanShared(async () => gen(++calls));
  t.same(await Promise.all([shared.generation!.atStart(), shared.generation!.atStart()]), [gen(1), gen(1)]);
  t.same(await shared.generation!.now(), gen(2));
  t.same(await shared.generation!.atStart(), gen(1));
  t.equal(newScanShared().generation, undefined, "no reader: no generation (one-shot scans read everything)");
});
