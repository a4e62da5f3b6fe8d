import t from "tap";
import { recordedNftScript } from "../../helpers/recorded-nft.js";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ToolRunner } from "../../../agent/io/run.js";
import { nftablesProbe } from "../../../agent/probes/nftables.js";
import type { ProbeContext } from "../../../agent/probes/types.js";
import { optionsOf } from "../../helpers/probe-context.js";

// A stand-in nft that answers each read with the recorded output of one scenario, through the real ToolRunner.
const rec = new URL("../../fixtures/netfilter/recorded/", import.meta.url);
// Every stand-in dir this file makes lives here, removed when the file ends.
const scratch = mkdtempSync(join(tmpdir(), "proxyscope-nftables-"));
t.teardown(() => rmSync(scratch, { recursive: true, force: true }));

function ctx(dir: string, prior: ProbeContext["prior"] = {}): ProbeContext {
  return {
    hostRoot: "/",
    procRoot: "/proc",
    sysRoot: "/sys",
    tools: new ToolRunner([dir]),
    callTimeoutMs: 10_000,
    prior,
  };
}

// The recorded stand-in nft (test/helpers/recorded-nft.ts).
const NFT_DISPATCH = recordedNftScript;

function nftDir(script: string): string {
  const dir = mkdtempSync(join(scratch, "nft-"));
  writeFileSync(join(dir, "nft"), script);
  chmodSync(join(dir, "nft"), 0o755);
  return dir;
}

t.test("nftables: reads tables, chains, sets and maps, never a whole table", async (t) => {
  const r = await nftablesProbe.run(
    ctx(nftDir(NFT_DISPATCH("nftables-pre1.34-dualstack"))),
    optionsOf("nftables"),
  );
  if (!r.ok) return t.fail(JSON.stringify(r.error));
  t.same(
    r.facts.kubeProxy.map((k) => k.family),
    ["ip", "ip6"],
  );
  t.equal(r.facts.kubeProxyTableName, "kube-proxy");
  // Only /configz (the table's name): reuse rests on the nf_tables generation, not kube-proxy's counters.
  t.same(nftablesProbe.needs, ["kube-proxy-configz"]);
});

t.test(
  "nftables: the same facts as the family-wide listings, from the named sets and maps alone",
  async (t) => {
    // The recordings of `nft -j list sets|maps <family>` (what the probe read before the reads were cut down: 8-14 s of CPU
    // at 10,000 Services) are the reference the cheap reads must reproduce, set by set and count by count.
    const { readdirSync, existsSync, readFileSync } = await import("node:fs");
    const { parseNftChains, parseNftSets, parseNftTables } = await import("../../../agent/parse/nft-json.js");
    const { nftablesFacts } = await import("../../../agent/parse/nftables-facts.js");
    let compared = 0;
    for (const scenario of readdirSync(rec)) {
      const file = (f: string) => new URL(`${scenario}/${f}`, rec);
      if (!existsSync(file("nft-list-tables.json"))) continue;
      const tables = parseNftTables(readFileSync(file("nft-list-tables.json"), "utf8"));
      const chains = parseNftChains(readFileSync(file("nft-list-chains.json"), "utf8"));
      if (!tables.ok || !chains.ok) return t.fail(`${scenario}: fixture`);
      const sets = ["ip", "ip6"].flatMap((fam) =>
        ["sets", "maps"].flatMap((w) => {
          if (!existsSync(file(`nft-list-${w}-${fam}.json`))) return [];
          const p = parseNftSets(readFileSync(file(`nft-list-${w}-${fam}.json`), "utf8"));
          return p.ok ? p.value : [];
        }),
      );
      const want = nftablesFacts({ tables: tables.value, chains: chains.value, sets }, "kube-proxy");
      const r = await nftablesProbe.run(ctx(nftDir(NFT_DISPATCH(scenario))), optionsOf("nftables"));
      if (!r.ok) return t.fail(`${scenario}: ${JSON.stringify(r.error)}`);
      t.same(r.facts.kubeProxy, want.kubeProxy, `${scenario}: kube-proxy's tables, sets, counts, NodePorts`);
      t.same(r.facts.firewalls, want.firewalls, `${scenario}: firewalls`);
      if (want.kubeProxy.some((k) => k.sets.some((s) => s.elements > 0))) compared++;
    }
    t.ok(compared >= 5, `${compared} recordings with kube-proxy elements compared`);
  },
);

t.test("nftables: one set or map that cannot be read makes the probe fail, never a zero count", async (t) => {
  for (const fail of ["-j list map ip kube-proxy service-ips", "-j -t list maps", "-j list chains"]) {
    const r = await nftablesProbe.run(
      ctx(nftDir(NFT_DISPATCH("nftables-v1.34", fail))),
      optionsOf("nftables"),
    );
    t.equal(r.ok, false, fail);
    t.equal(!r.ok && r.error.kind, "exit-status", fail);
    t.match(!r.ok && r.error.message, /Device or resource busy/, fail);
  }
  // A set the declarations name but that is gone by the time it is read is unread too.
  const gone = await nftablesProbe.run(
    ctx(nftDir(NFT_DISPATCH("nftables-v1.34", "-j list set ip kube-proxy cluster-ips"))),
    optionsOf("nftables"),
  );
  t.equal(gone.ok, false);
});

t.test("nftables: --terse declarations carry no count, and the parser never makes one up", async (t) => {
  const { readFileSync } = await import("node:fs");
  const { parseNftSetNames } = await import("../../../agent/parse/nft-json.js");
  const p = parseNftSetNames(readFileSync(new URL("nftables-v1.34/nft-list-t-maps.json", rec), "utf8"));
  if (!p.ok) return t.fail(p.error);
  t.ok(p.value.length > 0);
  t.ok(p.value.every((s) => !("elements" in s)));
});

t.test("nftables: the table name comes from /configz when that probe succeeded", async (t) => {
  const configz = { ok: true as const, facts: { nftablesTableName: "kp2" } };
  const r = await nftablesProbe.run(
    ctx(nftDir(NFT_DISPATCH("nftables-v1.34")), { "kube-proxy-configz": configz }),
    optionsOf("nftables"),
  );
  if (!r.ok) return t.fail(JSON.stringify(r.error));
  t.equal(r.facts.kubeProxyTableName, "kp2");
  t.same(r.facts.kubeProxy, []);
  const failed = { ok: false as const, error: { kind: "unreachable" as const, message: "refused" } };
  const r2 = await nftablesProbe.run(
    ctx(nftDir(NFT_DISPATCH("nftables-v1.34")), { "kube-proxy-configz": failed }),
    optionsOf("nftables"),
  );
  t.equal(r2.ok && r2.facts.kubeProxyTableName, "kube-proxy");
});

t.test("nftables: missing nft, a kernel without nf_tables, garbage", async (t) => {
  const missing = await nftablesProbe.run(ctx(mkdtempSync(join(scratch, "empty-"))), optionsOf("nftables"));
  t.equal(!missing.ok && missing.error.kind, "missing-tool");
  const noKernel = await nftablesProbe.run(
    ctx(nftDir("#!/bin/sh\necho 'Error: cache initialization failed: Protocol not supported' >&2\nexit 1\n")),
    optionsOf("nftables"),
  );
  t.equal(!noKernel.ok && noKernel.error.kind, "exit-status");
  t.match(
    !noKernel.ok && noKernel.error.message,
    /^kernel without nf_tables \(nft: nft exited 1: Error: cache/,
  );
  const garbage = await nftablesProbe.run(
    ctx(nftDir("#!/bin/sh\necho 'table ip filter'\n")),
    optionsOf("nftables"),
  );
  t.equal(!garbage.ok && garbage.error.kind, "garbage");
  // The cheap declarations come first now: they are part of the chain listing's fingerprint.
  t.equal(!garbage.ok && garbage.error.command, "nft -j -t list sets");
});

t.test(
  "nftables: tables read off chains, sets and maps match `nft -j list tables` in every recording",
  async (t) => {
    const { readdirSync, existsSync, readFileSync } = await import("node:fs");
    const { parseNftTables } = await import("../../../agent/parse/nft-json.js");
    for (const scenario of readdirSync(rec)) {
      const tablesFile = new URL(`${scenario}/nft-list-tables.json`, rec);
      if (!existsSync(tablesFile)) continue;
      const listed = parseNftTables(readFileSync(tablesFile, "utf8"));
      if (!listed.ok) return t.fail(listed.error);
      const r = await nftablesProbe.run(ctx(nftDir(NFT_DISPATCH(scenario))), optionsOf("nftables"));
      if (!r.ok) return t.fail(`${scenario}: ${JSON.stringify(r.error)}`);
      const key = (x: { family: string; name: string }) => `${x.family} ${x.name}`;
      t.same(
        r.facts.tables.map(key),
        listed.value.map(key),
        `${scenario}: the same tables, in the same order`,
      );
    }
  },
);

t.test(
  "nftables: what a long-running agent keeps between scans is parity's listings only while parity is on",
  async (t) => {
    // At 10,000 Services the chain listing is 110,000 chains (17 MB as objects, bench/results/rss.md)
    // and the counted maps' raw answers a few MB more; only parity reads them after the facts are made.
    const { readFileSync } = await import("node:fs");
    const { parseNftChains } = await import("../../../agent/parse/nft-json.js");
    const { cacheKey, newScanShared, ScanCache } = await import("../../../agent/probes/scan-cache.js");
    const { nftablesCacheParts } = await import("../../../agent/probes/nftables.js");
    const scenario = "nftables-v1.34";
    const all = parseNftChains(readFileSync(new URL(`${scenario}/nft-list-chains.json`, rec), "utf8"));
    if (!all.ok) return t.fail(all.error);
    const kubeProxy = all.value.filter((c) => c.table === "kube-proxy");
    t.ok(kubeProxy.length > 0 && kubeProxy.length < all.value.length, "the recording has other tables too");
    const { addChains, chainServed } = await import("../../../agent/parse/nft-services.js");
    const served = addChains(chainServed(), all.value, "kube-proxy");
    const { endpoints } = served;
    t.ok(endpoints.size > 0, "the recording has endpoint chains");
    const generation = async () => ({ ok: true as const, generation: 7 });
    const dir = nftDir(NFT_DISPATCH(scenario));
    const parityOn = { path: "/nonexistent", maxAgeS: 3600, node: "n1" };

    for (const parity of [null, parityOn]) {
      const label = parity === null ? "parity off" : "parity on";
      const cache = new ScanCache(600_000);
      for (const scan of ["read", "reused"]) {
        const shared = newScanShared(generation);
        const r = await nftablesProbe.run({ ...ctx(dir), cache, shared }, optionsOf("nftables", { parity }));
        if (!r.ok) return t.fail(JSON.stringify(r.error));
        t.equal(shared.freshness[0]?.reused, scan === "reused", `${label}, ${scan}`);
        if (parity === null) {
          t.equal(shared.nftChainServed, undefined, `${label}, ${scan}: no chain listing shared`);
          t.equal(shared.nftSetAnswers.size, 0, `${label}, ${scan}: no nft answer shared`);
        } else {
          t.same(shared.nftChainServed, served, `${label}, ${scan}: the endpoints of kube-proxy's chains`);
          t.ok(
            shared.nftSetAnswers.has("-j list map ip kube-proxy service-ips"),
            `${label}, ${scan}: answers`,
          );
        }
      }
      const kept = cache.lookup<Record<string, unknown>>(
        "nftables",
        cacheKey(await generation(), ...nftablesCacheParts("kube-proxy", parity !== null)),
      );
      if (!kept.hit) return t.fail(`${label}: nothing cached (${kept.why})`);
      const chains = kept.value.parityChains as typeof served | undefined;
      const answers = kept.value.setAnswers as unknown[] | undefined;
      if (parity === null) {
        t.same(Object.keys(kept.value).sort(), ["facts"], `${label}: the cache holds the facts alone`);
      } else {
        t.same(chains, served, `${label}: the cache holds the endpoints parity compares, no chain`);
        t.ok((answers?.length ?? 0) > 0, `${label}: and the maps' answers`);
      }
    }
  },
);
