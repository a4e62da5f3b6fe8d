import type { NodeFacts } from "../report/schema.js";

// Components that turn net.ipv4.ip_forward on each time they start, told by the FORWARD chains they keep:
// Calico's Felix (ipForwarding, "Enabled" by default: docs.tigera.io felix configuration), the Cilium
// agent (cilium/cilium daemon/cmd enableIPForwarding) and dockerd (--ip-forward, default true; it also sets
// FORWARD's policy to DROP then). The CNI bridge plugin (Flannel's) sets it only when a pod is set up, so it
// is not one of them.
const BY_FORWARD_JUMP: Readonly<Record<string, string>> = {
  "cali-FORWARD": "Calico (Felix ipForwarding)",
  CILIUM_FORWARD: "Cilium (its agent)",
};
const DOCKER = "dockerd (--ip-forward)";

/**
 * Who turns IPv4 forwarding back on when it starts, as far as the iptables facts show. Only what was read
 * names anyone: an unread backend, or an older agent's without FORWARD's jumps, names nobody (the claim
 * that forwarding stays off after a reboot then stands).
 */
export function forwardingSetAtStartBy(f: Pick<NodeFacts, "iptables">): string[] {
  const out = new Set<string>();
  for (const b of f.iptables?.backends ?? []) {
    if (!b.read) continue;
    for (const j of b.forwardJumps ?? []) {
      const who = BY_FORWARD_JUMP[j];
      if (who !== undefined) out.add(who);
    }
    if ((b.dockerChains ?? []).length > 0) out.add(DOCKER);
  }
  return [...out];
}
