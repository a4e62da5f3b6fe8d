// The User-Mode Linux guest every ipvs-mode benchmark boots: its modules, the fixed part of kube-proxy's
// ipvs-mode state (kube-ipvs0, the node's eth0, the KUBE-* ipsets, the ipvs-mode iptables rules), and
// the state for Services [from, to) added on top (bench/lib/gen.ts), so one boot can grow a node.
import { writeFileSync } from "node:fs";
import { ipsetEntries, IPVS_IPSET_HEADER, ipvsadmRestore, kubeIpvs0Batch, services } from "./gen.js";

export const IPVS_GUEST_MODULES = [
  "ipv6",
  "dummy",
  "ip_vs",
  "ip_vs_rr",
  "nf_tables",
  "ip_set",
  "ip_set_hash_ip",
  "ip_set_hash_ipport",
  "ip_set_hash_ipportip",
  "ip_set_hash_ipportnet",
  "ip_set_hash_net",
  "ip_set_bitmap_port",
  "xt_set",
  "nf_conntrack",
  "ip_tables",
  "iptable_nat",
  "iptable_filter",
  "iptable_mangle",
  "ip6_tables",
  "ip6table_filter",
  "ip6table_nat",
  "xt_comment",
  "xt_mark",
  "xt_conntrack",
  "xt_addrtype",
  "xt_MASQUERADE",
  "xt_nat",
  "xt_physdev",
  "ipt_REJECT",
  "ip6t_REJECT",
  "xt_tcpudp",
  "xt_multiport",
] as const;

/** Guest shell for the fixed part; expects $W (the work directory) set. */
export function ipvsGuestBase(work: string, repo: string): string {
  writeFileSync(`${work}/ipset-header`, IPVS_IPSET_HEADER + "\n");
  return `set -eu
W=${work}
ip link add kube-ipvs0 type dummy
ip link add eth0 type dummy && ip addr add 172.18.0.10/16 dev eth0 && ip link set eth0 up
ipset restore < "$W/ipset-header"
iptables-legacy-restore --noflush < ${repo}/test/fixtures/netfilter/sources/kubelet.rules
iptables-legacy-restore --noflush < ${repo}/test/fixtures/netfilter/sources/kube-proxy-ipvs-mode.rules
`;
}

/** Guest shell adding Services [from, to) x `endpoints` (its inputs written to `work` now). */
export function ipvsGuestAdd(work: string, from: number, to: number, endpoints: number): string {
  const svcs = services(from, to, endpoints);
  writeFileSync(`${work}/ipvs-${to}.txt`, ipvsadmRestore(svcs));
  writeFileSync(`${work}/addr-${to}.txt`, kubeIpvs0Batch(svcs));
  writeFileSync(`${work}/ipset-${to}.txt`, ipsetEntries(svcs));
  return `
t0=$(date +%s)
ipvsadm -R < "$W/ipvs-${to}.txt"
ip -batch "$W/addr-${to}.txt"
ipset restore < "$W/ipset-${to}.txt"
echo "state for N=${to} built in $(( $(date +%s) - t0 )) s: $(grep -c '^TCP\\|^UDP' /proc/net/ip_vs) virtual servers, $(grep -c '^  ->' /proc/net/ip_vs) real servers"
`;
}
