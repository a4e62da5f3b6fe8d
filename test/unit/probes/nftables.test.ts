import t from "tap";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ToolRunner } from "../../../agent/io/run.js";
import { nftablesProbe } from "../../../agent/probes/nftables.js";
import type { ProbeContext } from "../../../agent/probes/types.js";

// A stand-in nft that answers each read with the recorded output of one scenario, through the real ToolRunner.
const rec = new URL("../../fixtures/netfilter/recorded/", import.meta.url);

function ctx(dir: string, prior: ProbeContext["prior"] = {}): ProbeContext {
  return {
    hostRoot: "/",
    procRoot: "/proc",
    sysRoot: "/sys",
    tools: new ToolRunner([dir]),
    kubeProxyMetricsUrl: "http://127.0.0.1:10249",
    kubeProxyHealthUrl: "http://127.0.0.1:10256",
    nodeIPs: [],
    callTimeoutMs: 10_000,
    prior,
  };
}

const NFT_DISPATCH = (scenario: string) => `#!/bin/sh
d='${new URL(scenario + "/", rec).pathname}'
case "$*" in
  "-j list tables") /bin/cat "$d/nft-list-tables.json" ;;
  "-j list chains") /bin/cat "$d/nft-list-chains.json" ;;
  "-j list sets ip"|"-j list sets ip6"|"-j list maps ip"|"-j list maps ip6")
    set -- $*; /bin/cat "$d/nft-list-$3-$4.json" ;;
  *) echo "unexpected nft $*" >&2; exit 99 ;;
esac
`;

function nftDir(script: string): string {
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-nft-"));
  writeFileSync(join(dir, "nft"), script);
  chmodSync(join(dir, "nft"), 0o755);
  return dir;
}

t.test("nftables: reads tables, chains, sets and maps, never a whole table", async (t) => {
  const r = await nftablesProbe.run(ctx(nftDir(NFT_DISPATCH("nftables-pre1.34-dualstack"))));
  if (!r.ok) return t.fail(JSON.stringify(r.error));
  t.same(
    r.facts.kubeProxy.map((k) => k.family),
    ["ip", "ip6"],
  );
  t.equal(r.facts.kubeProxyTableName, "kube-proxy");
  t.same(nftablesProbe.needs, ["kube-proxy-configz"]);
});

t.test("nftables: the table name comes from /configz when that probe succeeded", async (t) => {
  const configz = { ok: true as const, facts: { nftablesTableName: "kp2" } };
  const r = await nftablesProbe.run(
    ctx(nftDir(NFT_DISPATCH("nftables-v1.34")), { "kube-proxy-configz": configz }),
  );
  if (!r.ok) return t.fail(JSON.stringify(r.error));
  t.equal(r.facts.kubeProxyTableName, "kp2");
  t.same(r.facts.kubeProxy, []);
  const failed = { ok: false as const, error: { kind: "unreachable" as const, message: "refused" } };
  const r2 = await nftablesProbe.run(
    ctx(nftDir(NFT_DISPATCH("nftables-v1.34")), { "kube-proxy-configz": failed }),
  );
  t.equal(r2.ok && r2.facts.kubeProxyTableName, "kube-proxy");
});

t.test("nftables: missing nft, a kernel without nf_tables, garbage", async (t) => {
  const missing = await nftablesProbe.run(ctx(mkdtempSync(join(tmpdir(), "proxyscope-empty-"))));
  t.equal(!missing.ok && missing.error.kind, "missing-tool");
  const noKernel = await nftablesProbe.run(
    ctx(nftDir("#!/bin/sh\necho 'Error: cache initialization failed: Protocol not supported' >&2\nexit 1\n")),
  );
  t.equal(!noKernel.ok && noKernel.error.kind, "exit-status");
  t.match(
    !noKernel.ok && noKernel.error.message,
    /^kernel without nf_tables \(nft: nft exited 1: Error: cache/,
  );
  const garbage = await nftablesProbe.run(ctx(nftDir("#!/bin/sh\necho 'table ip filter'\n")));
  t.equal(!garbage.ok && garbage.error.kind, "garbage");
  t.equal(!garbage.ok && garbage.error.command, "nft -j list chains");
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
      const r = await nftablesProbe.run(ctx(nftDir(NFT_DISPATCH(scenario))));
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
