import { z } from "zod";
import { ProbeError, ProbeErrorKind } from "./probe-error.js";

// Who put a KUBE-* chain there. kubelet keeps its chains after a clean migration; they are never leftovers.
export const ChainOwner = z.enum([
  "kubelet",
  "kube-proxy-ipvs", // only ipvs mode creates it
  "kube-proxy-iptables", // only iptables mode creates it
  "kube-proxy", // both iptables-family modes create it
  "unknown", // KUBE-* but in no list we know
]);
export type ChainOwner = z.infer<typeof ChainOwner>;

const BackendId = {
  backend: z.enum(["legacy", "nft"]),
  family: z.enum(["ipv4", "ipv6"]),
};

/** A backend whose rules were read in full. */
export const IptablesBackendRead = z.object({
  ...BackendId,
  read: z.literal(true),
  totalRules: z.number().int(),
  /** KUBE-* chains listed one by one, except the per-Service families counted in `patternCounts`. */
  kubeChains: z.array(
    z.object({ table: z.string(), name: z.string(), rules: z.number().int(), owner: ChainOwner }),
  ),
  /** Per-Service chain families, e.g. { "KUBE-SVC-*": 10000, "KUBE-SEP-*": 100000 }. */
  patternCounts: z.record(z.string(), z.number().int()),
  /** Rules outside kube-proxy's chains that jump into one of them (its exact names, not any KUBE-*), not kube-proxy's or kubelet's own jumps. */
  foreignJumps: z.array(
    z.object({ table: z.string(), chain: z.string(), rule: z.string(), target: z.string() }),
  ),
  /**
   * Rules outside kube-proxy's chains that match one of kube-proxy's ipsets by name (`-m set --match-set
   * KUBE-CLUSTER-IP ...`); absent from older agents, which did not look.
   */
  foreignSetMatches: z
    .array(z.object({ table: z.string(), chain: z.string(), rule: z.string(), set: z.string() }))
    .optional(),
  /** Built-in chain policies, e.g. { "filter/INPUT": "DROP" }. */
  policies: z.record(z.string(), z.string()),
  /** ACCEPT rules kube-proxy adds for NodePorts/health checks today, with their counters. */
  nodePortAccepts: z.array(
    z.object({
      table: z.string(),
      chain: z.string(),
      rule: z.string(),
      packets: z.number(),
      bytes: z.number(),
    }),
  ),
  /** Non-KUBE user chains that look like a host firewall (ufw-*, f2b-*, ...): name -> rules. */
  firewallChains: z.record(z.string(), z.number().int()),
  /** Docker's filter chains (DOCKER-USER, DOCKER-FORWARD, ...): Docker runs here; absent from older agents. */
  dockerChains: z.array(z.string()).optional(),
  /**
   * The targets filter/FORWARD's rules jump to (a network plugin's accepts live there: FLANNEL-FWD,
   * cali-FORWARD, ...), first seen first, an unconditional `-j ACCEPT` as "ACCEPT (every packet)"; absent
   * from older agents, which did not look: not "none".
   */
  forwardJumps: z.array(z.string()).optional(),
  /**
   * Rules outside kube-proxy's chains that match IPVS state (`-m ipvs`: --ipvs, --vaddr, --vport, --vdir,
   * --vmethod): they match nothing once IPVS is gone. Absent from older agents, which did not look.
   */
  ipvsMatches: z.array(z.object({ table: z.string(), chain: z.string(), rule: z.string() })).optional(),
  /** How many such rules there were: the list above is cut at the parser's listing cap. */
  ipvsMatchCount: z.number().int().nonnegative().optional(),
});

/**
 * A backend whose rules could not be read (tool missing or failing, output not understood): its rules
 * are unknown, never "none". It carries no lists or counts, so no reader can take it for an empty one.
 */
export const IptablesBackendUnread = z.object({ ...BackendId, read: z.literal(false), why: ProbeError });

// Older agents sent `available` (false with an `error` string and empty lists): read as unread.
function fromOlderAgent(v: unknown): unknown {
  if (typeof v !== "object" || v === null || "read" in v || !("available" in v)) return v;
  const o = v as Record<string, unknown>;
  if (o.available === true) return { ...o, read: true };
  const text = typeof o.error === "string" ? o.error : "not read (older agent)";
  const kind = ProbeErrorKind.safeParse(text.split(":")[0]);
  return { ...o, read: false, why: { kind: kind.success ? kind.data : "garbage", message: text } };
}

export const IptablesBackendFacts = z.preprocess(
  fromOlderAgent,
  z.discriminatedUnion("read", [IptablesBackendRead, IptablesBackendUnread]),
);
export type IptablesBackendRead = z.infer<typeof IptablesBackendRead>;
export type IptablesBackendUnread = z.infer<typeof IptablesBackendUnread>;
export type IptablesBackendFacts = z.infer<typeof IptablesBackendFacts>;

export const IptablesFacts = z.object({ backends: z.array(IptablesBackendFacts) });
export type IptablesFacts = z.infer<typeof IptablesFacts>;

export const NftFamily = z.enum(["ip", "ip6", "inet", "arp", "bridge", "netdev"]);

export const NftKubeProxyTable = z.object({
  family: NftFamily,
  name: z.string(),
  sets: z.array(
    z.object({
      name: z.string(),
      kind: z.enum(["set", "map"]),
      type: z.string(),
      elements: z.number().int(),
    }),
  ),
  chains: z.object({
    total: z.number().int(),
    /** "service-*" chains (one per Service port) and "endpoint-*" chains (one per endpoint). */
    service: z.number().int(),
    endpoint: z.number().int(),
    external: z.number().int(),
    base: z.array(z.string()),
  }),
  /** NodePorts ("TCP:30080") in kube-proxy's service-nodeports / no-endpoint-nodeports maps; absent from older agents. */
  nodePorts: z.array(z.string()).optional(),
  /**
   * The NodePorts of service-nodeports that no-endpoint-nodeports does not also drop or reject: the ones
   * a connect can reach an endpoint through. Absent from older agents.
   */
  nodePortsWithEndpoints: z.array(z.string()).optional(),
  /**
   * The addresses in kube-proxy's `nodeport-ips` set: the only ones its rules accept NodePorts on. null
   * when the table has no such set, which kube-proxy deletes when nodePortAddresses matches all
   * (pkg/proxy/nftables/proxier.go setupNFTables: then `fib daddr type local` accepts every local
   * address but loopback). Absent from older agents, which did not read it: not "all".
   */
  nodePortIPs: z.array(z.string()).nullable().optional(),
});
export type NftKubeProxyTable = z.infer<typeof NftKubeProxyTable>;

export const NftablesFacts = z.object({
  tables: z.array(z.object({ family: NftFamily, name: z.string(), owner: z.string() })),
  /** The name kube-proxy uses (from /configz nftables.tableName when set, else "kube-proxy"). */
  kubeProxyTableName: z.string(),
  kubeProxy: z.array(NftKubeProxyTable),
  /** Tables that filter input/forward traffic: firewalld, a hand-written inet filter, ... */
  firewalls: z.array(
    z.object({
      family: NftFamily,
      name: z.string(),
      kind: z.string(),
      /** Base chains hooked on input/forward with their policy, e.g. ["input:drop"]. */
      hooks: z.array(z.string()),
    }),
  ),
});
export type NftablesFacts = z.infer<typeof NftablesFacts>;
