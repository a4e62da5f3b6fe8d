import { compareVersions, KUBE_PROXY_IPVS_FILTER, versionParts } from "../../parse/versions.js";
import type { NodeFacts } from "../../report/schema.js";
import { listed, rule } from "../rule.js";

const CHAIN = "KUBE-IPVS-FILTER";

/**
 * ipvs mode binds every Service IP on kube-ipvs0, so the host answers on them like on its own addresses.
 * Since kubernetes/kubernetes#108460 (first released in v1.26.0) KUBE-IPVS-FILTER, jumped to from INPUT, REJECTs new
 * connections to kube-ipvs0's addresses unless the destination is a Service's IP and port (ICMP included:
 * kubernetes/website#41002). nftables mode rejects other ports of a ClusterIP and drops unallocated
 * addresses of the Service CIDRs (pkg/proxy/nftables/proxier.go setupNFTables, cluster-ips-check, v1.34.4);
 * iptables mode binds no Service IP at all. So where the filter is missing, host ports reachable on Service
 * IPs and ping to them stop at the switch. Whether anyone uses them is not read: a warning.
 */
export const serviceIpsHostPortsClose = rule({
  findings: { "service-ips-host-ports-close": { severity: ["warning", "error"], stage: "before" } },
  needs: ["kubeIpvs0"],
  evaluate({ facts, view }, opts) {
    if (view.phase !== "ipvs" || !facts.kubeIpvs0) return [];
    // A link-local address is the link's own, never a Service IP kube-proxy put there.
    const ips = facts.kubeIpvs0.addresses.filter((a) => !/^fe[89ab][0-9a-f]:/i.test(a.address));
    const v4 = ips.filter((a) => a.family === "inet").length;
    const v6 = ips.length - v4;
    if (v4 + v6 === 0) return [];
    const families = [...(v4 > 0 ? ["ipv4"] : []), ...(v6 > 0 ? ["ipv6"] : [])];
    const filter = filterState(facts.iptables, families);
    const version = facts.kubeProxyMetrics?.gitVersion ?? null;
    const parts = versionParts(version);
    const old = parts === null ? null : compareVersions(parts, KUBE_PROXY_IPVS_FILTER) < 0;
    // Flows no Service port explains exist only without the filter (it rejects them before conntrack
    // confirms an entry): someone relies on what the switch takes away.
    const other = facts.serviceConntrack?.serviceIpsOther ?? null;
    const inUse = other !== null && other.read && other.to.length > 0;
    if (filter.state === "present") return [];
    // An unread backend could hold the chain: then only kube-proxy's own version can tell it lacks one.
    if (filter.state === "unknown" && old !== true && !inUse) return [];
    const since = `v${KUBE_PROXY_IPVS_FILTER.join(".")}`;
    return [
      {
        id: "service-ips-host-ports-close",
        severity: inUse ? "error" : "warning",
        stage: "before",
        blocksMigration: inUse,
        title: inUse
          ? `Service IPs on this node are in use beyond their Service ports (${other.flows} kinds of flow: ping or host ports): nftables mode rejects other ports and drops unallocated ClusterIPs`
          : old === true
            ? `kube-proxy ${version} predates ${CHAIN}: host services answer on this node's ${v4 + v6} Service IPs, and they answer ping; nftables mode rejects other ports and drops unallocated ClusterIPs`
            : `${CHAIN} is missing: host services answer on this node's ${v4 + v6} Service IPs, and they answer ping; nftables mode rejects other ports and drops unallocated ClusterIPs`,
        evidence: {
          kubeProxyVersion: version ?? "not read",
          filterSince: since,
          kubeIpvsFilter:
            filter.state === "absent" ? `absent (${filter.read} read)` : `not read: ${filter.why}`,
          serviceIps: v4 + v6,
          flowsToServiceIps:
            other === null
              ? "not read (an older agent)"
              : !other.read
                ? `not read: ${other.why}`
                : listed(
                    other.to.map((f) => `${f.address} ${f.what} (${f.connections} connections)`),
                    opts.maxListed,
                  ),
          ipvs: `before ${since}: every port of a kube-ipvs0 address reaches the host, and ICMP echo is answered`,
          nftables:
            "rejects other ports of a ClusterIP, drops unallocated ClusterIPs (cluster-ips-check), answers no ping",
        },
        remedy:
          "Find who uses a Service IP for anything but its Service ports before switching (`conntrack -L -d <ClusterIP>` for ICMP or other ports, monitoring that pings ClusterIPs, host daemons reached through a Service IP); point them at the node's own address or a Service port",
      },
    ];
  },
});

type FilterState =
  { state: "present" } | { state: "absent"; read: string } | { state: "unknown"; why: string };

/**
 * KUBE-IPVS-FILTER in the filter table of any backend of a family kube-ipvs0 holds addresses of: present.
 * Absent only when every backend of those families was read (the probe lists all four); unread is unknown.
 */
function filterState(iptables: NodeFacts["iptables"], families: readonly string[]): FilterState {
  if (!iptables) return { state: "unknown", why: "the iptables probe failed" };
  const mine = iptables.backends.filter((b) => families.includes(b.family));
  if (mine.some((b) => b.read && b.kubeChains.some((c) => c.table === "filter" && c.name === CHAIN)))
    return { state: "present" };
  const unread = mine.filter((b) => !b.read);
  const read = mine.filter((b) => b.read);
  if (unread.length > 0 || read.length === 0)
    return {
      state: "unknown",
      why:
        unread.map((b) => `${b.family} ${b.backend} (${b.read ? "" : b.why.message})`).join(", ") ||
        `no ${families.join("/")} backend listed`,
    };
  return {
    state: "absent",
    read: read
      .map((b) => `${b.family} ${b.backend}`)
      .sort()
      .join(", "),
  };
}
