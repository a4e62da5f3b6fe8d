// Runs the real nftables and iptables probes from dist/ (build first) several times with one
// ScanCache, in whatever network namespace it is started in, reading the real nf_tables generation
// with the agent's own proxyscope-nft-generation and changing the kernel's rules between scans with
// The real nft and iptables-nft (what is cached must never make a finding stale).
// argv[2]: a directory with add-service.nft, foreign-chain.nft and foreign-element.nft; argv[3]:
// where to write each scan's outcome as JSON.
import { writeFileSync } from "node:fs";
import process from "node:process";
import { spawnSync } from "node:child_process";
import { driverContext } from "./driver-context.mjs";
import { readNftGeneration } from "../../dist/agent/io/nft-generation.js";
import { iptablesProbe } from "../../dist/agent/probes/iptables.js";
import { nftablesProbe } from "../../dist/agent/probes/nftables.js";
import { newScanShared, ScanCache } from "../../dist/agent/probes/scan-cache.js";

const [dir, out] = process.argv.slice(2);
// Parity on (its snapshot need not exist: only the nftables probe runs): the probe then keeps the
// listings parity reuses, and the test sees them shared; the last two scans run with parity off.
const ctx = driverContext();
// The cache's clock is the test's: the full-read interval passes when the test says so, never by waiting.
let now = Date.now();
const cache = new ScanCache(600_000, () => now);
const realGeneration = () => readNftGeneration(ctx.tools, 30000);
const prior = { "kube-proxy-configz": { ok: false, error: { kind: "exec-failed", message: "not asked" } } };

const scans = [];
async function scan(label, readGeneration = realGeneration, over = { cache, forParity: true }) {
  const shared = newScanShared(readGeneration);
  const scanCtx = { ...ctx, cache: over.cache, shared, prior };
  const outcome = await nftablesProbe.run(scanCtx, { forParity: over.forParity });
  const kp = outcome.ok ? outcome.facts.kubeProxy.find((t) => t.family === "ip") : null;
  const ipt = await iptablesProbe.run(scanCtx);
  const nft4 = ipt.ok ? ipt.facts.backends.find((b) => b.backend === "nft" && b.family === "ipv4") : null;
  const generation = await realGeneration();
  scans.push({
    label,
    ok: outcome.ok,
    generation: generation.ok ? generation.generation : null,
    chains: kp?.chains ?? null,
    serviceIps: kp?.sets.find((s) => s.name === "service-ips")?.elements ?? null,
    iptablesNftRules: nft4?.read ? nft4.totalRules : null,
    firewallChains: nft4?.read ? nft4.firewallChains : null,
    setAnswers: shared.nftSetAnswers.size,
    parityEndpoints: shared.nftChainServed
      ? [...shared.nftChainServed.endpoints.values()].reduce((n, e) => n + e.size, 0)
      : null,
    freshness: shared.freshness,
  });
}
async function nft(file) {
  const r = await ctx.tools.run("nft", ["-f", `${dir}/${file}`], { timeoutMs: 30000, maxBytes: 1 << 20 });
  if (!r.ok) throw new Error(`nft -f ${file}: ${r.error.message}`);
}
function must(cmd, args, input) {
  const r = spawnSync(cmd, args, { input, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")}: ${r.stderr}`);
}

await scan("first");
now += 60_000;
await scan("unchanged");
// Reads change nothing: a whole listing by nft and by iptables-nft-save between two scans.
must("nft", ["list", "ruleset"]);
must("iptables-nft-save", ["-c"]);
now += 60_000;
await scan("after other readers");
// kube-proxy programs a new Service.
await nft("add-service.nft");
now += 60_000;
await scan("service added");
now += 60_000;
await scan("unchanged after the service");
// Another program (a host firewall) adds a chain and a rule to iptables-nft's filter table.
must(
  "iptables-nft-restore",
  ["--noflush"],
  "*filter\n:ufw-before-input - [0:0]\n-A INPUT -j ufw-before-input\n-A ufw-before-input -p tcp --dport 22 -j ACCEPT\nCOMMIT\n",
);
now += 60_000;
await scan("another program's iptables-nft rule");
// Someone else's chain and map element in kube-proxy's own table: no counter of kube-proxy's moves.
await nft("foreign-chain.nft");
await nft("foreign-element.nft");
now += 60_000;
await scan("foreign chain and element");
// The ruleset changes before a scan (so it reads) and again while it reads: the reader of "now"
// first changes it, then answers.
must("nft", ["add", "chain", "ip", "kube-proxy", "added-before-read"]);
now += 60_000;
let changed = false;
await scan("changed during the read", () => {
  if (!changed) {
    changed = true;
    return realGeneration();
  }
  must("nft", ["add", "chain", "ip", "kube-proxy", "added-while-read"]);
  return realGeneration();
});
now += 60_000;
await scan("after a read across a change");
now += 600_000;
await scan("full-read interval passed");
await scan("generation unknown", async () => ({
  ok: false,
  error: { kind: "missing-tool", message: "proxyscope-nft-generation not found" },
}));
const parityOff = { cache: new ScanCache(600_000, () => now), forParity: false };
await scan("parity off", realGeneration, parityOff);
now += 60_000;
await scan("parity off, unchanged", realGeneration, parityOff);
writeFileSync(out, JSON.stringify(scans, null, 1));
