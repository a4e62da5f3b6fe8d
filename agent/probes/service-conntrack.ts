import { BlockList, isIPv6 } from "node:net";
import type { AddressesFacts } from "../facts/host.js";
import type { IpsetFacts, IpvsFacts, KubeIpvs0Facts } from "../facts/ipvs.js";
import type { ConfigzFacts } from "../facts/kube-proxy.js";
import { LISTED, type ServiceConntrackFacts } from "../facts/service-conntrack.js";
import type { ProbeOutcome } from "../facts/sources.js";
import type { ConntrackFlow } from "../parse/proc-net.js";
import { CONNTRACK_MAX_BYTES } from "./listeners.js";
import { conntrackCounter, defineProbe } from "./types.js";

const factsOf = <F>(o: ProbeOutcome<unknown> | undefined): F | null => (o?.ok ? (o.facts as F) : null);
const hostPort = (ip: string, port: number) => (ip.includes(":") ? `[${ip}]:${port}` : `${ip}:${port}`);
const PORTED = new Set(["tcp", "udp", "sctp"]);

/**
 * What counts as "inside" for nftables mode's externalTrafficPolicy: Local short-circuit
 * (pkg/proxy/nftables/proxier.go v1.34.4: `localDetector.IfLocalNFT() goto clusterPolicyChain`, then
 * `fib saddr type local goto clusterPolicyChain`): the node's own addresses, and pods as kube-proxy's
 * local detector sees them. Only detectLocalMode ClusterCIDR is modelled; with no clusterCIDR its detector
 * is a no-op and pod traffic keeps the Local policy in nftables mode too.
 */
function insideSources(
  addresses: AddressesFacts,
  configz: ConfigzFacts | null,
): { check: (ip: string) => boolean; inside: string } {
  const list = new BlockList();
  // The node's addresses (kube-ipvs0's 10,000 Service IPs among them) go in on the first flow checked:
  // a scan that checks none (no conntrack table, no flow to a Local Service) does not build the list.
  let withAddresses = false;
  const check = (ip: string): boolean => {
    if (!withAddresses) {
      for (const i of addresses.interfaces)
        for (const a of i.addresses) list.addAddress(a.address, isIPv6(a.address) ? "ipv6" : "ipv4");
      withAddresses = true;
    }
    return list.check(ip, isIPv6(ip) ? "ipv6" : "ipv4");
  };
  if (configz === null)
    return { check, inside: "node addresses only (kube-proxy's /configz not read: pods not counted)" };
  const mode = configz.detectLocalMode ?? "";
  const cidrs = (configz.clusterCIDR ?? "")
    .split(",")
    .map((c) => c.trim())
    .filter((c) => c !== "");
  if (mode !== "" && mode !== "ClusterCIDR")
    return {
      check,
      inside: `node addresses only (detectLocalMode ${mode} is not modelled: pods not counted)`,
    };
  if (cidrs.length === 0)
    return {
      check,
      inside: "node addresses only (no clusterCIDR: nftables mode keeps pods on the Local policy)",
    };
  const added: string[] = [];
  for (const c of cidrs) {
    const [net, len] = c.split("/");
    try {
      list.addSubnet(net!, Number(len), isIPv6(net!) ? "ipv6" : "ipv4");
      added.push(c);
    } catch {
      // A clusterCIDR kube-proxy would not accept either: its detector does not use it.
    }
  }
  return { check, inside: `node addresses, clusterCIDR ${added.join(",") || "(none valid)"}` };
}

/**
 * Connections that show someone relying on ipvs-only behaviour, from one read of the conntrack table:
 * in-cluster callers of externalTrafficPolicy: Local destinations (kept on this node's endpoints by ipvs,
 * spread to all endpoints by nftables) and flows to Service IPs that no Service port explains (host
 * services and ping, which nftables mode rejects or drops).
 */
export const serviceConntrackProbe = defineProbe("service-conntrack", {
  needs: ["ipsets", "addresses", "kube-proxy-configz", "kube-ipvs0", "ipvs"],
  readsConntrack: true,
  async run(ctx) {
    const ipsets = factsOf<IpsetFacts>(ctx.prior.ipsets);
    const addresses = factsOf<AddressesFacts>(ctx.prior.addresses);
    const configz = factsOf<ConfigzFacts>(ctx.prior["kube-proxy-configz"]);
    const kubeIpvs0 = factsOf<KubeIpvs0Facts>(ctx.prior["kube-ipvs0"]);
    const ipvs = factsOf<IpvsFacts>(ctx.prior.ipvs);

    const etp = ipsets?.etpLocal ?? null;
    const etpWhy =
      ipsets === null
        ? "the ipsets probe failed"
        : etp === null
          ? "a KUBE-*-LOCAL set could not be listed (or an older agent)"
          : addresses === null
            ? "the addresses probe failed"
            : null;
    const svcWhy =
      kubeIpvs0 === null ? "the kube-ipvs0 probe failed" : ipvs === null ? "the ipvs probe failed" : null;

    const etpAddresses = new Set(etp?.addresses ?? []);
    const etpNodePorts = new Set(etp?.nodePorts ?? []);
    const serviceIps = new Set(kubeIpvs0?.addresses.map((a) => a.address) ?? []);
    const nodeAddresses = new Set(
      (addresses?.interfaces ?? [])
        .filter((i) => i.name !== "kube-ipvs0")
        .flatMap((i) => i.addresses.map((a) => a.address)),
    );
    const served = new Set(
      (ipvs?.virtualServers ?? [])
        .filter((v) => v.address !== null && v.port !== null)
        .map((v) => `${v.protocol} ${hostPort(v.address!, v.port!)}`),
    );
    const inside = addresses === null ? null : insideSources(addresses, configz);
    const lookForEtp = etpWhy === null && (etpAddresses.size > 0 || etpNodePorts.size > 0);
    const lookForSvc = svcWhy === null && serviceIps.size > 0;

    const keyOf = (f: ConntrackFlow): string | null => {
      const proto = f.proto.toUpperCase();
      if (lookForEtp && f.dport !== null && PORTED.has(f.proto) && inside!.check(f.src)) {
        const dest = `${proto} ${hostPort(f.dst, f.dport)}`;
        if (etpAddresses.has(dest) || (nodeAddresses.has(f.dst) && etpNodePorts.has(`${proto}:${f.dport}`)))
          return `etp ${dest}`;
      }
      if (lookForSvc && serviceIps.has(f.dst)) {
        if (f.proto === "icmp" || f.proto === "icmpv6") return `svc ${f.dst} ICMP`;
        if (f.dport !== null && !served.has(`${proto} ${hostPort(f.dst, f.dport)}`))
          return `svc ${f.dst} ${proto} :${f.dport}`;
      }
      return null;
    };

    let counts: Map<string, number> | null = new Map();
    let readWhy = "";
    if (lookForEtp || lookForSvc) {
      const r = await conntrackCounter(ctx, "service-conntrack", CONNTRACK_MAX_BYTES)(keyOf);
      if (r.ok) counts = r.value;
      else {
        counts = null;
        readWhy = `${r.error.kind}: ${r.error.message}`;
      }
    }
    const entries = [...(counts ?? new Map<string, number>()).entries()].sort(
      (a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1),
    );
    const etpEntries = entries.filter(([k]) => k.startsWith("etp "));
    const svcEntries = entries.filter(([k]) => k.startsWith("svc "));
    const facts: ServiceConntrackFacts = {
      etpLocalFromInside:
        etpWhy !== null
          ? { read: false, why: etpWhy }
          : counts === null
            ? { read: false, why: readWhy }
            : {
                read: true,
                inside: inside!.inside,
                to: etpEntries
                  .slice(0, LISTED)
                  .map(([k, n]) => ({ destination: k.slice(4), connections: n })),
                destinations: etpEntries.length,
              },
      serviceIpsOther:
        svcWhy !== null
          ? { read: false, why: svcWhy }
          : counts === null
            ? { read: false, why: readWhy }
            : {
                read: true,
                flows: svcEntries.length,
                to: svcEntries.slice(0, LISTED).map(([k, n]) => {
                  const [, address, ...what] = k.split(" ");
                  return { address: address!, what: what.join(" "), connections: n };
                }),
              },
    };
    return { ok: true, facts };
  },
});
