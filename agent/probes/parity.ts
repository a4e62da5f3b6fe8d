import { sysctlValue, type AddressesFacts, type SysctlFacts } from "../facts/host.js";
import type { IpsetFacts, KubeIpvs0Facts } from "../facts/ipvs.js";
import type { ConfigzFacts, ProxyModeFacts } from "../facts/kube-proxy.js";
import { KUBE_PROXY_TABLE_FAMILIES, kubeProxyTableName } from "../facts/kube-proxy-table.js";
import { IpvsSnapshot, type ParityFacts } from "../facts/parity.js";
import { readIpvsTable } from "../io/ipvs-table.js";
import { readSnapshotFile, writeFileAtomic } from "../io/snapshot-file.js";
import { addNftChains, addNftMaps, emptyServed, servedFrom } from "../parse/nft-services.js";
import { buildSnapshot, compareParity, type SnapshotInput } from "../parse/parity.js";
import { kubeIpvs0ServiceIps } from "../view/kube-ipvs0.js";
import { onLinkOfOtherInterfaces } from "../view/on-link.js";
import { defineProbe, type ProbeContext } from "./types.js";

// 10,000 Services x 10 endpoints with their NodePorts on a few addresses is ~4 MB of JSON; this only
// bounds a runaway table (and a file someone else put there).
const MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024;
const NFT_MAX_BYTES = 128 * 1024 * 1024;
// kube-proxy's maps that say what each Service IP and NodePort goes to (proxier.go serviceIPsMap,
// serviceNodePortsMap, noEndpointServicesMap, noEndpointNodePortsMap).
const MAPS = ["service-ips", "service-nodeports", "no-endpoint-services", "no-endpoint-nodeports"];
// Per-Service entries the report carries; the counts are always whole.
const MAX_LISTED = 500;

/** The parity snapshot (--parity-snapshot): its file, its age limit and this node's name. */
export interface ParityOptions {
  path: string;
  maxAgeS: number;
  node: string;
}

interface ParityProbeOptions {
  /** null: --parity-snapshot not set, parity off. */
  snapshot: ParityOptions | null;
}

function prior<T>(ctx: ProbeContext, name: keyof ProbeContext["prior"]): T | null {
  const o = ctx.prior[name];
  return o?.ok ? (o.facts as T) : null;
}

function tableName(ctx: ProbeContext): string {
  return kubeProxyTableName(prior<ConfigzFacts>(ctx, "kube-proxy-configz"));
}

// The Service IPs off-node clients reach only through the node's ARP answer from kube-ipvs0: the same
// test as service-ips-answered-by-arp (on another interface's on-link IPv4 prefix, arp_ignore 0).
function arpReach(ctx: ProbeContext, ipvs0: KubeIpvs0Facts): NonNullable<SnapshotInput["arp"]> {
  const addresses = prior<AddressesFacts>(ctx, "addresses");
  const sysctls = prior<SysctlFacts>(ctx, "sysctls");
  if (addresses === null) return { read: false, why: "the node's addresses were not read" };
  if (sysctls === null) return { read: false, why: "the sysctls were not read" };
  const ignore = sysctlValue(sysctls, "net.ipv4.conf.all.arp_ignore");
  if (ignore === null) return { read: false, why: "net.ipv4.conf.all.arp_ignore was not read" };
  if (Number(ignore) >= 1) return { read: true, ips: new Set() };
  const onLink = onLinkOfOtherInterfaces(addresses, kubeIpvs0ServiceIps(ipvs0), "kube-ipvs0");
  return { read: true, ips: new Set(onLink.map((o) => o.ip)) };
}

// ipvs mode: keep what IPVS serves, kube-proxy's virtual servers only, with every real server.
async function record(ctx: ProbeContext, p: ParityOptions): Promise<ParityFacts> {
  const ipvs0 = prior<KubeIpvs0Facts>(ctx, "kube-ipvs0");
  const ipsets = prior<IpsetFacts>(ctx, "ipsets");
  // Without kube-ipvs0 or the NodePort sets a Service IP cannot be told from someone else's virtual
  // server: a snapshot built on that guess would later "lose" keepalived's addresses.
  if (ipvs0 === null) return { state: "not-recorded", path: p.path, why: "kube-ipvs0 was not read" };
  if (ipsets === null || ipsets.nodePorts == null) {
    return { state: "not-recorded", path: p.path, why: "kube-proxy's NodePort ipsets were not read" };
  }
  // The ipvs probe's read of this scan when it kept the real servers; otherwise read here.
  let table = ctx.shared?.ipvsTable;
  if (table?.realServers === undefined) {
    const r = await readIpvsTable(ctx.procRoot, { collectRealServers: true });
    if (!r.ok) return { state: "not-recorded", path: p.path, why: `IPVS not read: ${r.error.message}` };
    if (!r.available) return { state: "not-recorded", path: p.path, why: "the kernel has no IPVS loaded" };
    table = r.table;
  }
  const reals = table.realServers ?? new Map();
  const snap = buildSnapshot({
    node: p.node,
    takenAt: Math.floor(Date.now() / 1000),
    virtualServers: table.virtualServers.map((v) => ({ ...v, reals: reals.get(v) ?? [] })),
    serviceIPs: new Set(ipvs0.addresses.map((a) => a.address)),
    nodePorts: new Set(ipsets.nodePorts),
    arp: arpReach(ctx, ipvs0),
  });
  const w = await writeFileAtomic(p.path, JSON.stringify(snap), MAX_SNAPSHOT_BYTES);
  if (!w.ok) return { state: "not-recorded", path: p.path, why: w.why };
  return {
    state: "recorded",
    path: p.path,
    takenAt: snap.takenAt,
    virtualServers: snap.virtualServers.length,
    realServers: snap.virtualServers.reduce((n, v) => n + v.reals.length, 0),
    bytes: w.bytes,
  };
}

// nftables mode: compare the snapshot with kube-proxy's maps and chain names. Any nft call that fails
// fails the probe (reported unread), never an empty table that would call every Service lost.
async function compare(
  ctx: ProbeContext,
  p: ParityOptions,
): Promise<
  { ok: true; facts: ParityFacts } | { ok: false; error: import("../facts/probe-error.js").ProbeError }
> {
  // A snapshot that could be someone else's is unread (a named "corrupt" state), never compared.
  const f = await readSnapshotFile(p.path, MAX_SNAPSHOT_BYTES);
  if (!f.ok) {
    if (f.missing) return { ok: true, facts: { state: "no-snapshot", path: p.path } };
    return { ok: true, facts: { state: "corrupt", path: p.path, why: f.why } };
  }
  let snap: IpvsSnapshot;
  try {
    const v = IpvsSnapshot.safeParse(JSON.parse(f.text));
    if (!v.success)
      return {
        ok: true,
        facts: {
          state: "corrupt",
          path: p.path,
          why: `not a snapshot: ${v.error.issues[0]?.message ?? "?"}`,
        },
      };
    snap = v.data;
  } catch {
    return { ok: true, facts: { state: "corrupt", path: p.path, why: "not JSON (cut short?)" } };
  }
  const now = Date.now() / 1000;
  const age = {
    takenAt: snap.takenAt,
    ageSeconds: Math.max(0, Math.round(now - snap.takenAt)),
    maxAgeSeconds: p.maxAgeS,
  };
  if (age.ageSeconds > p.maxAgeS) return { ok: true, facts: { state: "stale", path: p.path, ...age } };

  const table = tableName(ctx);
  const listedChains = ctx.shared?.nftChainServed;
  const served = listedChains !== undefined ? servedFrom(listedChains) : emptyServed();
  // What the nftables probe already listed in this scan (its chain listing, its answers for these
  // maps) is used as is: at 10,000 Services `list chains` alone is ~3 s of CPU (bench/results).
  const shared = ctx.shared;
  const nft = async (args: string[], add: typeof addNftMaps) => {
    const known = shared?.nftSetAnswers.get(args.join(" "));
    const r =
      known !== undefined
        ? ({ ok: true, stdout: known } as const)
        : await ctx.tools.run("nft", args, { timeoutMs: ctx.callTimeoutMs, maxBytes: NFT_MAX_BYTES });
    if (!r.ok) return r;
    const parsed = add(served, r.stdout, table);
    return parsed.ok
      ? ({ ok: true } as const)
      : ({
          ok: false,
          error: { kind: "garbage", message: parsed.error, command: `nft ${args.join(" ")}` },
        } as const);
  };
  for (const family of KUBE_PROXY_TABLE_FAMILIES) {
    if (listedChains === undefined) {
      const c = await nft(["-j", "list", "chains", family], addNftChains);
      if (!c.ok) return c;
    }
    // A family without kube-proxy's table has no maps to ask for (asking would be an error).
    if (!served.families.has(family)) continue;
    // One map at a time: nft 1.0.6 answers `list maps <family>` by fetching the whole ruleset, rules
    // included (213 s at 10,000 Services on a loaded machine, bench/node/parity-nft.ts).
    for (const map of MAPS) {
      const m = await nft(["-j", "list", "map", family, table, map], addNftMaps);
      if (!m.ok) return m;
    }
  }
  const result = compareParity(snap, served);
  return {
    ok: true,
    facts: {
      state: "compared",
      path: p.path,
      ...age,
      counts: result.counts,
      services: result.services.slice(0, MAX_LISTED),
      truncated: result.services.length > MAX_LISTED,
      ...(snap.arpNotRead !== undefined ? { arpNotRead: snap.arpNotRead } : {}),
    },
  };
}

/**
 * Parity: while kube-proxy answers ipvs, keep a snapshot of what IPVS serves (the one file the
 * agent writes, and only with --parity-snapshot); once it answers nftables, compare. Only kube-proxy's
 * own answer counts: a guessed phase neither overwrites the snapshot nor compares against it.
 */
export const parityProbe = defineProbe("parity", {
  // nftables and ipvs first: their listings of this scan are reused here rather than read twice.
  needs: [
    "kube-proxy-mode",
    "kube-proxy-configz",
    "kube-ipvs0",
    "ipsets",
    "nftables",
    "ipvs",
    "addresses",
    "sysctls",
  ],
  async run(ctx, { snapshot: p }: ParityProbeOptions) {
    if (p === null) return { ok: true, facts: { state: "off" } };
    const mode = prior<ProxyModeFacts>(ctx, "kube-proxy-mode")?.mode ?? null;
    if (mode === "ipvs") return { ok: true, facts: await record(ctx, p) };
    if (mode === "nftables") return compare(ctx, p);
    return {
      ok: true,
      facts: {
        state: "not-applicable",
        why: mode === null ? "kube-proxy did not answer /proxyMode" : `kube-proxy answers ${mode}`,
      },
    };
  },
});
