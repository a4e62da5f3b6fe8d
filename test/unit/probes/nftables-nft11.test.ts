import t from "tap";
import { recordedNftScript } from "../../helpers/recorded-nft.js";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ToolRunner } from "../../../agent/io/run.js";
import { nftablesProbe } from "../../../agent/probes/nftables.js";
import { optionsOf } from "../../helpers/probe-context.js";

// The agent's image carries Debian trixie's nft 1.1.3 (Dockerfile). What it prints for the probe's reads
// was recorded on the same scenario as nft 1.0.6's (test/fixtures/netfilter/record-nft11.sh): 1.1.3 adds
// a chain's `comment` and a set's "dynamic" flag. The probe must read both into the same facts.
const rec = new URL("../../fixtures/netfilter/recorded/", import.meta.url);
const OLD = "nftables-v1.34";
const NEW = "nftables-v1.34-nft1.1";
const scratch = mkdtempSync(join(tmpdir(), "proxyscope-nft11-"));
t.teardown(() => rmSync(scratch, { recursive: true, force: true }));

// The recorded stand-in nft (test/helpers/recorded-nft.ts) for one scenario.
function nftDir(scenario: string): string {
  const dir = mkdtempSync(join(scratch, "nft-"));
  writeFileSync(join(dir, "nft"), recordedNftScript(scenario));
  chmodSync(join(dir, "nft"), 0o755);
  return dir;
}

async function read(scenario: string) {
  const ctx = {
    hostRoot: "/",
    procRoot: "/proc",
    sysRoot: "/sys",
    tools: new ToolRunner([nftDir(scenario)]),
    callTimeoutMs: 10_000,
    prior: {},
  };
  return nftablesProbe.run(ctx, optionsOf("nftables"));
}

const recorded = (scenario: string, file: string) =>
  readFileSync(new URL(`${scenario}/${file}`, rec), "utf8");

t.test("the recordings are what each nft printed, and they differ", async (t) => {
  t.match(recorded(OLD, "nft-list-chains.json"), /"version": "1\.0\.6"/);
  t.match(recorded(NEW, "nft-list-chains.json"), /"version": "1\.1\.3"/);
  t.notMatch(recorded(OLD, "nft-list-chains.json"), /"comment"/, "1.0.6 prints no chain comment");
  t.match(recorded(NEW, "nft-list-chains.json"), /"comment": "helper for @no-endpoint-services/);
  t.match(recorded(NEW, "nft-list-t-sets.json"), /"dynamic"/, "1.1.3 flags the affinity set dynamic");
});

t.test("nft 1.1.3's output reads into the same facts as nft 1.0.6's", async (t) => {
  const old = await read(OLD);
  const now = await read(NEW);
  if (!old.ok || !now.ok) return t.fail(JSON.stringify([old, now]));
  t.match(now.facts.kubeProxy, [{ family: "ip", name: "kube-proxy" }]);
  t.ok(now.facts.kubeProxy[0]!.sets.length > 0, "kube-proxy's sets and maps are read");
  t.ok(now.facts.kubeProxy[0]!.chains.total > 0, "and its chains");
  t.same(now.facts, old.facts);
});
