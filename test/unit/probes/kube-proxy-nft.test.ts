import t, { type Test } from "tap";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ToolRunner } from "../../../agent/io/run.js";
import { kubeProxyNftProbe } from "../../../agent/probes/kube-proxy-nft.js";
import { newScanShared, ScanCache } from "../../../agent/probes/scan-cache.js";
import { probeContext } from "../../helpers/probe-context.js";

// The witness of kube-proxy's image nft, laid out as the image keeps it (ld.so, lib/, nft). Stand-ins: a
// shell "loader" that checks it is given the directory's own library path and starts the named program,
// and an nft script that answers --version and then lists, fails or dies by a signal. The real loader
// and bookworm's nft crashing on real sets are test/kernel/nft11-sets-netns.test.ts.
const LOADER = `#!/bin/sh
[ "$1" = --library-path ] && [ "$2" = "\${0%/*}/lib" ] || { echo "loader: bad argv $*" >&2; exit 97; }
shift 2
echo "$@" >>"\${0%/*}/calls"
exec "$@"
`;

function witnessDir(t: Test, listing: string, parts = { loader: true, nft: true }): string {
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-witness-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, "lib"));
  if (parts.loader) writeFileSync(join(dir, "ld.so"), LOADER, { mode: 0o755 });
  if (parts.nft) {
    writeFileSync(
      join(dir, "nft"),
      `#!/bin/sh\nif [ "$1" = --version ]; then echo "nftables v1.0.6 (Lester Gooch #5)"; exit 0; fi\n${listing}\n`,
      { mode: 0o755 },
    );
    chmodSync(join(dir, "nft"), 0o755);
  }
  return dir;
}

const ask = (dir: string, over = {}) =>
  kubeProxyNftProbe.run(probeContext({ tools: new ToolRunner(["/nonexistent"], undefined, dir), ...over }));

t.test("a witness that lists the sets: ok, with its version, run through its own loader", async (t) => {
  const dir = witnessDir(t, `echo '{"nftables": []}'`);
  const r = await ask(dir);
  t.same(r, {
    ok: true,
    facts: {
      outcome: "ok",
      command: "kube-proxy-nft -j -t list sets",
      detail: "it listed every set of this node",
      version: "1.0.6",
    },
  });
  t.same(readFileSync(join(dir, "calls"), "utf8").split("\n").filter(Boolean), [
    `${dir}/nft -j -t list sets`,
    `${dir}/nft --version`,
  ]);
});

t.test("killed by SIGSEGV: crashed, with the signal; another signal is named as itself", async (t) => {
  const r = await ask(witnessDir(t, "kill -SEGV $$"));
  t.match(r, { ok: true, facts: { outcome: "crashed", signal: "SIGSEGV", version: "1.0.6" } });
  t.match(r.ok && r.facts.detail, /killed by SIGSEGV/);
  const abrt = await ask(witnessDir(t, "kill -ABRT $$"));
  t.match(abrt, { ok: true, facts: { outcome: "crashed", signal: "SIGABRT" } });
});

t.test("an exit status or a timeout: failed, never ok nor crashed", async (t) => {
  const r = await ask(
    witnessDir(t, "echo 'Error: Could not process rule: Operation not permitted' >&2; exit 1"),
  );
  t.match(r, { ok: true, facts: { outcome: "failed", detail: /exit-status|not-permitted/ } });
  t.equal(r.ok && r.facts.signal, undefined);
  const slow = await ask(witnessDir(t, "exec /bin/sleep 5"), { callTimeoutMs: 200 });
  t.match(slow, { ok: true, facts: { outcome: "failed", detail: /^timeout: / } });
});

t.test(
  "no witness (a host binary, a build without it): not present, never asked, never 'no crash'",
  async (t) => {
    for (const parts of [
      { loader: false, nft: true },
      { loader: true, nft: false },
    ]) {
      const r = await ask(witnessDir(t, "exit 0", parts));
      t.match(r, { ok: true, facts: { outcome: "not-present", version: null, detail: /^not asked: / } });
    }
    t.match(await ask("/nonexistent/witness"), { ok: true, facts: { outcome: "not-present" } });
  },
);

t.test("gated like the nftables read: asked again only when the nf_tables generation moved", async (t) => {
  const dir = witnessDir(t, "kill -SEGV $$");
  let generation = 7;
  const cache = new ScanCache(600_000);
  const lists = () =>
    readFileSync(join(dir, "calls"), "utf8")
      .split("\n")
      .filter((l) => l.endsWith("list sets")).length;
  const tools = new ToolRunner(["/nonexistent"], undefined, dir);
  const scan = async () => {
    const shared = newScanShared(async () => ({ ok: true as const, generation }));
    const r = await kubeProxyNftProbe.run(probeContext({ tools, cache, shared }));
    t.match(r, { ok: true, facts: { outcome: "crashed", signal: "SIGSEGV" } }, "the crash every scan");
    return shared.freshness[0];
  };
  t.match(await scan(), { source: "kube-proxy-nft", reused: false });
  t.match(await scan(), { source: "kube-proxy-nft", reused: true });
  t.equal(lists(), 1, "the same generation: not asked again");
  generation = 8;
  t.match(await scan(), { reused: false });
  t.equal(lists(), 2, "a new generation: asked again");
});

t.test("a failed ask is not kept: the next scan asks again under the same generation", async (t) => {
  const dir = witnessDir(t, "exit 1");
  const cache = new ScanCache(600_000);
  const tools = new ToolRunner(["/nonexistent"], undefined, dir);
  for (let i = 0; i < 2; i++) {
    const shared = newScanShared(async () => ({ ok: true as const, generation: 7 }));
    const r = await kubeProxyNftProbe.run(probeContext({ tools, cache, shared }));
    t.match(r, { ok: true, facts: { outcome: "failed" } });
  }
  const lists = readFileSync(join(dir, "calls"), "utf8")
    .split("\n")
    .filter((l) => l.endsWith("list sets")).length;
  t.equal(lists, 2, "asked in both scans");
});
