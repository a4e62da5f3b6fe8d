// Parity: what the parity check's reads cost on a node in nftables mode at N Services x 10 endpoints:
// the nft calls the parity probe makes (never a rule listing) and the in-process parse and compare.
// Run as root after `npm run build`: node dist/bench/node/parity-nft.js 1000 10000
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { SNAPSHOT_FORMAT, type IpvsSnapshot } from "../../agent/facts/parity.js";
import { addNftChains, addNftMaps, emptyServed } from "../../agent/parse/nft-services.js";
import { compareParity } from "../../agent/parse/parity.js";
import { services } from "../lib/gen.js";
import { BenchNetns } from "../lib/netns.js";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const ENDPOINTS = 10;

function timed(ns: string, args: string[]): { ms: number; bytes: number; rssKb: number | null; out: string } {
  const t0 = performance.now();
  const r = spawnSync("/usr/bin/time", ["-f", "%M", "ip", "netns", "exec", ns, "nft", ...args], {
    encoding: "utf8",
    maxBuffer: 1024 * 2 ** 20,
  });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`nft ${args.join(" ")}: ${r.stderr}`);
  const rss = Number(r.stderr.trim().split("\n").at(-1));
  return { ms, bytes: Buffer.byteLength(r.stdout), rssKb: Number.isFinite(rss) ? rss : null, out: r.stdout };
}

for (const n of process.argv.slice(2).map(Number)) {
  const ns = BenchNetns.create(`proxyscope-parity-bench-${n}`);
  try {
    const load = ns.loadNftablesMode(n, ENDPOINTS, REPO);
    // What the probe runs: chains per family, then kube-proxy's four maps one by one; and, for the
    // record, `list maps ip`, which nft 1.0.6 answers by fetching the whole ruleset.
    const allMaps = n <= 1000 ? timed(ns.name, ["-j", "list", "maps", "ip"]) : null;
    const one = ["service-ips", "service-nodeports", "no-endpoint-services", "no-endpoint-nodeports"].map(
      (m) => timed(ns.name, ["-j", "list", "map", "ip", "kube-proxy", m]),
    );
    const maps = {
      ms: one.reduce((a, x) => a + x.ms, 0),
      bytes: one.reduce((a, x) => a + x.bytes, 0),
      rssKb: Math.max(...one.map((x) => x.rssKb ?? 0)),
      out: "",
    };
    const chains = timed(ns.name, ["-j", "list", "chains", "ip"]);
    const t0 = performance.now();
    const served = emptyServed();
    const pms = one.map((x) => addNftMaps(served, x.out, "kube-proxy"));
    const pm = pms.find((p) => !p.ok) ?? pms[0]!;
    const pc = addNftChains(served, chains.out, "kube-proxy");
    const parseMs = performance.now() - t0;
    if (!pm.ok || !pc.ok) throw new Error(`parse: ${pm.ok ? "" : pm.error} ${pc.ok ? "" : pc.error}`);
    // The snapshot IPVS would have held for the same Services.
    const snap: IpvsSnapshot = {
      format: SNAPSHOT_FORMAT,
      node: "bench",
      takenAt: 0,
      virtualServers: services(0, n, ENDPOINTS).flatMap((s) => [
        {
          kind: "service-ip" as const,
          protocol: s.protocol.toUpperCase() as "TCP" | "UDP",
          address: s.clusterIP,
          port: s.port,
          reals: s.endpoints.map((e) => `${e}:${s.targetPort}`),
        },
      ]),
    };
    const t1 = performance.now();
    const result = compareParity(snap, served);
    const compareMs = performance.now() - t1;
    const snapBytes = Buffer.byteLength(JSON.stringify(snap));
    console.log(
      JSON.stringify({
        services: n,
        endpointsPer: ENDPOINTS,
        loadS: Math.round(load.ms / 1000),
        listMapsIpWhole: allMaps && {
          ms: Math.round(allMaps.ms),
          rssMb: allMaps.rssKb && Math.round(allMaps.rssKb / 1024),
        },
        fourMapsIp: {
          ms: Math.round(maps.ms),
          mb: +(maps.bytes / 2 ** 20).toFixed(2),
          rssMb: maps.rssKb && Math.round(maps.rssKb / 1024),
        },
        listChainsIp: {
          ms: Math.round(chains.ms),
          mb: +(chains.bytes / 2 ** 20).toFixed(2),
          rssMb: chains.rssKb && Math.round(chains.rssKb / 1024),
        },
        parseMs: Math.round(parseMs),
        compareMs: Math.round(compareMs),
        snapshotMb: +(snapBytes / 2 ** 20).toFixed(2),
        counts: result.counts,
      }),
    );
  } finally {
    ns.destroy();
  }
}
