import { isKubeProxyTable } from "../facts/kube-proxy-table.js";
import type { NftKubeProxyTable, NftablesFacts } from "../facts/netfilter.js";
import type { NftChain, NftSet, NftSetName, NftTable } from "./nft-json.js";

// Table names iptables-nft creates for its compat layer (libxtables' builtin tables), only ever in
// the ip/ip6/arp/bridge families; an `inet filter` is someone's own firewall, not iptables-nft.
const IPTABLES_NFT_TABLES = new Set(["filter", "nat", "mangle", "raw", "security"]);
const IPTABLES_NFT_FAMILIES = new Set(["ip", "ip6", "arp", "bridge"]);
const FILTER_HOOKS = new Set(["input", "forward"]);
// kube-proxy's per-Service chain families (pkg/proxy/nftables/proxier.go: servicePortChainNamePrefix,
// servicePortEndpointChainNamePrefix, serviceExternalChainNamePrefix) carry an 8-character hash, which
// tells "service-ULMVA6XW-ns1/svc1/tcp/p80" from the helper chain "service-endpoints-check".
const SERVICE_CHAIN = /^service-[A-Z0-9]{8}-/;
const ENDPOINT_CHAIN = /^endpoint-[A-Z0-9]{8}-/;
const EXTERNAL_CHAIN = /^external-[A-Z0-9]{8}-/;
// One session-affinity set per endpoint ("affinity-<hash>-ns/svc/proto/port__ip/port"): counted in
// the chain totals' spirit, never listed one by one.
const AFFINITY_PREFIX = "affinity-";

export interface NftListings {
  tables: NftTable[];
  /** The chain listing, or its summary made while it was read (chainSummaryBuilder). */
  chains: readonly NftChain[] | ChainSummary;
  /** kube-proxy's named sets and maps with their elements (`nft -j list set|map`, or a family's `list sets|maps`). */
  sets: NftSet[];
  /** What `-t list sets|maps` declared: a set declared but missing from `sets` was not read. */
  declared?: NftSetName[];
}

/**
 * The named sets and maps whose elements the facts count: kube-proxy's own, one `nft list set|map`
 * each. Never the per-endpoint affinity sets (thousands, counted nowhere) and never another table's.
 */
export function setsToCount(declared: readonly NftSetName[], kubeProxyTableName: string): NftSetName[] {
  return declared.filter(
    (s) =>
      isKubeProxyTable({ family: s.family, name: s.table }, kubeProxyTableName) &&
      !s.name.startsWith(AFFINITY_PREFIX),
  );
}

function tableOwner(t: NftTable, hooked: readonly NftChain[], kubeProxyTableName: string): string {
  if (isKubeProxyTable(t, kubeProxyTableName)) return "kube-proxy";
  if (IPTABLES_NFT_FAMILIES.has(t.family) && IPTABLES_NFT_TABLES.has(t.name)) return "iptables-nft";
  if (t.name === "firewalld") return "firewalld";
  if (hooked.some((c) => c.hook !== undefined && FILTER_HOOKS.has(c.hook) && c.policy === "drop")) {
    return "host-firewall";
  }
  return "other";
}

/** What the facts take from one table's chains: counts, and its base chains (the only ones with a hook). */
interface TableChains {
  total: number;
  service: number;
  endpoint: number;
  external: number;
  hooked: NftChain[];
}

export interface ChainSummary {
  /** Every (family, table) holding a chain, in first-seen order. */
  tables: NftTable[];
  byTable: Map<string, TableChains>;
}

/** A summary that chains are added to one at a time, as they are read (nft-json's eachNftChain). */
export function chainSummaryBuilder(): { add(c: NftChain): void; summary: ChainSummary } {
  const summary: ChainSummary = { tables: [], byTable: new Map() };
  return {
    summary,
    add(c) {
      const k = `${c.family} ${c.table}`;
      let t = summary.byTable.get(k);
      if (t === undefined) {
        t = { total: 0, service: 0, endpoint: 0, external: 0, hooked: [] };
        summary.byTable.set(k, t);
        summary.tables.push({ family: c.family, name: c.table });
      }
      t.total++;
      if (c.hook !== undefined) t.hooked.push(c);
      // The three prefixes exclude one another: one test at most matches.
      if (SERVICE_CHAIN.test(c.name)) t.service++;
      else if (ENDPOINT_CHAIN.test(c.name)) t.endpoint++;
      else if (EXTERNAL_CHAIN.test(c.name)) t.external++;
    },
  };
}

/** The per-table summary of a chain listing (a summary already made is taken as it is). */
export function summarizeChains(chains: readonly NftChain[] | ChainSummary): ChainSummary {
  if (!Array.isArray(chains)) return chains as ChainSummary;
  const b = chainSummaryBuilder();
  for (const c of chains as readonly NftChain[]) b.add(c);
  return b.summary;
}

/** The table declares `nodeport-ips` (when the listing says so; a listing without declarations cannot). */
function declaredNodePortIPs(l: NftListings, t: NftTable): boolean {
  return (l.declared ?? []).some(
    (s) => s.family === t.family && s.table === t.name && s.name === "nodeport-ips",
  );
}

/** Classifies every table and summarises kube-proxy's own tables, from listings that never dump rules. */
export function nftablesFacts(l: NftListings, kubeProxyTableName: string): NftablesFacts {
  const { byTable } = summarizeChains(l.chains);
  const none: TableChains = { total: 0, service: 0, endpoint: 0, external: 0, hooked: [] };
  const tables: NftablesFacts["tables"] = [];
  const kubeProxy: NftKubeProxyTable[] = [];
  const firewalls: NftablesFacts["firewalls"] = [];
  for (const t of l.tables) {
    const chains = byTable.get(`${t.family} ${t.name}`) ?? none;
    const owner = tableOwner(t, chains.hooked, kubeProxyTableName);
    tables.push({ family: t.family, name: t.name, owner });
    if (owner === "kube-proxy") {
      const mine = l.sets.filter((s) => s.family === t.family && s.table === t.name);
      const ports = (name: string) =>
        new Set(mine.filter((s) => s.name === name).flatMap((s) => s.nodePorts ?? []));
      const dropped = ports("no-endpoint-nodeports");
      const npIPs = mine.find((s) => s.name === "nodeport-ips" && s.kind === "set");
      kubeProxy.push({
        family: t.family,
        name: t.name,
        sets: l.sets
          .filter((s) => s.family === t.family && s.table === t.name && !s.name.startsWith(AFFINITY_PREFIX))
          .map((s) => ({ name: s.name, kind: s.kind, type: s.type, elements: s.elements })),
        nodePorts: [
          ...new Set(
            l.sets
              .filter((s) => s.family === t.family && s.table === t.name)
              .flatMap((s) => s.nodePorts ?? []),
          ),
        ].sort(),
        nodePortsWithEndpoints: [...ports("service-nodeports")].filter((p) => !dropped.has(p)).sort(),
        // Declared but not listed (its elements unread) would leave `addresses` undefined: never "all".
        ...(npIPs === undefined
          ? declaredNodePortIPs(l, t)
            ? {}
            : { nodePortIPs: null }
          : npIPs.addresses
            ? { nodePortIPs: [...npIPs.addresses].sort() }
            : {}),
        chains: {
          total: chains.total,
          service: chains.service,
          endpoint: chains.endpoint,
          external: chains.external,
          base: chains.hooked.map((c) => c.name),
        },
      });
    } else if (owner === "firewalld" || owner === "host-firewall") {
      firewalls.push({
        family: t.family,
        name: t.name,
        kind: owner,
        hooks: chains.hooked
          .filter((c) => c.hook !== undefined && FILTER_HOOKS.has(c.hook))
          .map((c) => `${c.hook}:${c.policy ?? "accept"}`),
      });
    }
  }
  return { tables, kubeProxyTableName, kubeProxy, firewalls };
}
