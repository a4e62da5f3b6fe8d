import type { ConfigzFacts } from "./kube-proxy.js";

// kube-proxy's nftables tables, named in one place. Its nftables mode runs one proxier per IP family,
// each in its own table of that family, named "kube-proxy" (kubernetes/kubernetes
// pkg/proxy/nftables/proxier.go: `kubeProxyTable = "kube-proxy"`, knftables.New(ipFamily, kubeProxyTable));
// no KubeProxyConfiguration field renames it (parse/kube-proxy-configz.ts), so a /configz
// nftables.tableName is honoured only when a future config carries one.

/** The name when /configz gives none. */
const DEFAULT_KUBE_PROXY_TABLE = "kube-proxy";

/** The families kube-proxy's nftables mode makes its table in. */
export const KUBE_PROXY_TABLE_FAMILIES = ["ip", "ip6"] as const;

/** The table name kube-proxy uses: /configz's nftables.tableName when set, else "kube-proxy". */
export function kubeProxyTableName(configz: ConfigzFacts | null | undefined): string {
  const name = configz?.nftablesTableName;
  return typeof name === "string" && name !== "" ? name : DEFAULT_KUBE_PROXY_TABLE;
}

type KubeProxyTableFamily = (typeof KUBE_PROXY_TABLE_FAMILIES)[number];

/** A family kube-proxy makes its table in ("ip", "ip6"); "inet", "bridge" and anything else are not. */
export function isKubeProxyTableFamily(family: unknown): family is KubeProxyTableFamily {
  return (KUBE_PROXY_TABLE_FAMILIES as readonly unknown[]).includes(family);
}

/** One of kube-proxy's tables: its name in an IPv4 or IPv6 family (an inet or bridge table of that name is not). */
export function isKubeProxyTable(t: { family: unknown; name: unknown }, name: string): boolean {
  return t.name === name && isKubeProxyTableFamily(t.family);
}

/** The shell commands that delete both of kube-proxy's tables, as a user types them. */
export function deleteKubeProxyTablesCommand(name: string = DEFAULT_KUBE_PROXY_TABLE): string {
  return KUBE_PROXY_TABLE_FAMILIES.map((f) => `nft delete table ${f} ${name}`).join("; ");
}
