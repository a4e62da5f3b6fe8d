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

/** Not one of the addresses the kernel gives a link by itself (any Service dummy link: kube-dummy-if too). */
export const isServiceAddress = (a: string): boolean => !NOT_SERVICE.check(a, isIPv6(a) ? "ipv6" : "ipv4");

/** The Service IPs kube-ipvs0 holds: its addresses less the kernel's own link-local and loopback ones. */
export function kubeIpvs0ServiceIps(k: KubeIpvs0Facts): string[] {
  return k.present ? k.addresses.map((a) => a.address).filter(isServiceAddress) : [];
}
