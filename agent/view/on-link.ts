import { isIPv4 } from "node:net";
import type { NodeFacts } from "../report/schema.js";

/** An IPv4 address inside the on-link prefix of one of the node's interfaces, and which one. */
interface OnLink {
  ip: string;
  iface: string;
  /** The interface's address and prefix, e.g. "172.18.0.10/16". */
  prefix: string;
}

/**
 * Which of `ips` fall inside an IPv4 prefix another interface of this node is on (not `exclude`, not
 * lo, not a /32 — a host route has no neighbours), leaving out the node's own addresses: those stay
 * local whatever kube-proxy does. Only IPv4: ARP answers for any local address on any interface while
 * arp_ignore=0, IPv6 neighbour discovery answers only for the receiving interface's own addresses.
 */
export function onLinkOfOtherInterfaces(
  addresses: NonNullable<NodeFacts["addresses"]>,
  ips: readonly string[],
  exclude: string,
): OnLink[] {
  const others = addresses.interfaces.filter((i) => i.name !== exclude);
  const own = new Set(others.flatMap((i) => i.addresses.map((a) => a.address)));
  const prefixes = others
    .filter((i) => i.name !== "lo")
    .flatMap((i) =>
      i.addresses
        .filter((a) => a.family === "inet" && a.prefixLen < 32 && isIPv4(a.address))
        .map((a) => {
          const mask = maskOf(a.prefixLen);
          return {
            iface: i.name,
            prefix: `${a.address}/${a.prefixLen}`,
            mask,
            net: (v4(a.address) & mask) >>> 0,
          };
        }),
    );
  return ips.flatMap((ip) => {
    if (!isIPv4(ip) || own.has(ip)) return [];
    const n = v4(ip);
    const hit = prefixes.find((p) => (n & p.mask) >>> 0 === p.net);
    return hit ? [{ ip, iface: hit.iface, prefix: hit.prefix }] : [];
  });
}

// Integer prefix arithmetic on addresses isIPv4 accepted (dotted quads), not BlockList.check: that
// builds two SocketAddress objects a call, and this runs for each of 10,000 Service IPs.
const v4 = (a: string): number => a.split(".").reduce((n, o) => n * 256 + Number(o), 0);
const maskOf = (len: number): number => (len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0);
