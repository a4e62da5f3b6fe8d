import { BlockList, isIPv6 } from "node:net";
import type { KubeIpvs0Facts } from "../facts/ipvs.js";

// Addresses the kernel puts on a link by itself, never a Service IP: an IPv6 link-local address appears
// as soon as something brings kube-ipvs0 up (systemd-networkd's catch-all .network on Flatcar before
// flatcar/init#89, NetworkManager, a hand-run `ip link set up`, k/k#70113, #107662); kube-proxy never
// binds it and leaves it, and loopback, out of the addresses it counts as its own
// (pkg/proxy/ipvs/netlink_linux.go GetLocalAddresses, isValidForSet).
const NOT_SERVICE = new BlockList();
NOT_SERVICE.addSubnet("fe80::", 10, "ipv6");
NOT_SERVICE.addAddress("::1", "ipv6");
NOT_SERVICE.addSubnet("127.0.0.0", 8, "ipv4");

// Most addresses are told apart by their first group alone, without BlockList.check (which builds two
// SocketAddress objects a call: 10,000 Service IPs, several callers a report, were a tenth of a scan).
// Only a first group that could start a listed range goes to the BlockList: an IPv4 first octet of 127
// or one written unusually, an IPv6 first group of zero (::1, ::ffff:127.0.0.1) or in fe80::/10.
const PLAIN_V4_FIRST = /^(?:0|[1-9]\d{0,2})\./;
const V6_FIRST = /^[0-9A-Fa-f]{1,4}:/;

/** Not one of the addresses the kernel gives a link by itself (any Service dummy link: kube-dummy-if too). */
export const isServiceAddress = (a: string): boolean => {
  if (!a.includes(":")) {
    const m = PLAIN_V4_FIRST.exec(a);
    if (m !== null && m[0] !== "127.") return true;
  } else {
    const m = V6_FIRST.exec(a);
    if (m !== null) {
      const first = parseInt(m[0], 16);
      if (first !== 0 && (first < 0xfe80 || first > 0xfebf)) return true;
    }
  }
  return !NOT_SERVICE.check(a, isIPv6(a) ? "ipv6" : "ipv4");
};

/** The Service IPs kube-ipvs0 holds: its addresses less the kernel's own link-local and loopback ones. */
export function kubeIpvs0ServiceIps(k: KubeIpvs0Facts): string[] {
  return k.present ? k.addresses.map((a) => a.address).filter(isServiceAddress) : [];
}
