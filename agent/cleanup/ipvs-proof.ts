import type { AddressesFacts } from "../facts/host.js";
import type { VirtualServer } from "../facts/ipvs.js";
import { nodePortIpsets, SERVICE_ADDRESS_IPSETS } from "../facts/owners.js";
import { vsKey } from "../parse/ipvs-proc.js";

/** What cleanup reads to prove a virtual server kube-proxy's, or why it could not. */
export type IpvsEvidence =
  | {
      read: true;
      /** Forwarding methods of each virtual server's real servers, by vsKey. */
      forwards: Map<string, string[]>;
      /** Members of each ipset by name ("10.96.0.1,tcp:443", "30080"). */
      sets: Map<string, Set<string>>;
    }
  | { read: false; why: string };

/** What else the proof reads from the scan; null where the scan could not read it. */
interface ProofContext {
  kubeIpvs0: ReadonlySet<string> | null;
  /** The node's primary addresses (null: the node's addresses not read). */
  primary: AddressesFacts["primary"] | null;
  /** Addresses on kube-router's kube-dummy-if. */
  kubeRouterIps: ReadonlySet<string> | null;
}

/**
 * May cleanup delete this virtual server? `proven` only on kube-proxy's own record of both its
 * address and its port. Otherwise it is left alone: `foreign` (someone else's for sure), `unproven`
 * (may be kube-proxy's, but nothing kube-proxy wrote says so) or `unread` (the proof was not read).
 */
type DeletionProof =
  { proven: true; why: string } | { proven: false; leave: "foreign" | "unproven" | "unread"; why: string };

// Which of kube-proxy's ipsets hold every Service address:port and every NodePort is facts/owners.ts's
// knowledge (SERVICE_ADDRESS_IPSETS, nodePortIpsets), with the names of both families.

const leave = (l: "foreign" | "unproven" | "unread", why: string): DeletionProof => ({
  proven: false,
  leave: l,
  why,
});

/**
 * The proof cleanup needs before it deletes a virtual server. This is not the report's
 * classification (agent/view/virtual-servers.ts), which says for findings whether a virtual server
 * looks like kube-proxy's; a deletion needs more than a look.
 *
 * Proof is what only kube-proxy does: it masquerades to every endpoint (never Route/Tunnel/Local),
 * and it records each virtual server it makes (kubernetes/kubernetes pkg/proxy/ipvs/proxier.go,
 * syncProxyRules). A Service's address:port is a member of its Service sets; kube-ipvs0 holding an
 * address proves the address, never the port. A NodePort is only a port in KUBE-NODE-PORT-TCP/-UDP, so
 * its address needs proof of its own: kube-proxy made one virtual server per node address, and with
 * nodePortAddresses unset that was every local address but kube-ipvs0's (GetAllLocalAddressesExcept),
 * a keepalived VIP included. So the port proves a NodePort only on kube-ipvs0 or on the node's primary
 * address, which kube-proxy serves NodePorts on and which is no VIP; on any other address the same
 * port is kube-proxy's or another load balancer's, and a guess deletes nothing.
 */
export function deletionProof(v: VirtualServer, ev: IpvsEvidence, ctx: ProofContext): DeletionProof {
  if (v.protocol === "FWM" || v.address === null || v.port === null)
    return leave("foreign", "a firewall-mark service: kube-proxy makes none");
  // Even when a set kube-proxy left names the same ClusterIP:port: kube-router serves it now.
  if (ctx.kubeRouterIps?.has(v.address))
    return leave(
      "foreign",
      "its address is on kube-dummy-if: kube-router's service proxy serves it (kube-proxy never binds there)",
    );
  if (!ev.read) return leave("unread", `cannot tell whose it is: ${ev.why}`);
  const forwards = ev.forwards.get(vsKey(v));
  if (forwards === undefined)
    return leave("unread", "cannot tell whose it is: not in the IPVS table read for cleanup");
  const other = forwards.filter((f) => f !== "Masq");
  if (other.length > 0)
    return leave("foreign", `forwards by ${other.join(", ")}: kube-proxy only masquerades`);
  const entry = `${v.address},${v.protocol.toLowerCase()}:${v.port}`;
  const inSet = SERVICE_ADDRESS_IPSETS.find((s) => ev.sets.get(s)?.has(entry));
  if (inSet !== undefined) return { proven: true, why: `masqueraded, and in kube-proxy's ${inSet}` };
  const sets = nodePortIpsets(v.protocol);
  if (v.protocol === "SCTP") {
    const np = sets.find((s) => ev.sets.get(s)?.has(entry));
    if (np !== undefined) return { proven: true, why: `masqueraded, and in kube-proxy's ${np}` };
  }
  const np = sets.find((s) => ev.sets.get(s)?.has(String(v.port)));
  const onKubeIpvs0 = ctx.kubeIpvs0?.has(v.address) === true;
  if (np === undefined)
    return onKubeIpvs0
      ? leave(
          "unproven",
          `its address is on kube-ipvs0, but ${entry} is in none of kube-proxy's Service sets and its port in no NodePort set: nothing kube-proxy recorded names this port. Not deleted on a guess; if it is kube-proxy's, remove it by hand`,
        )
      : leave(
          "foreign",
          "in none of kube-proxy's ipsets and not on kube-ipvs0: someone else's (keepalived, kube-vip)",
        );
  if (onKubeIpvs0)
    return { proven: true, why: `masqueraded NodePort on kube-ipvs0, its port in kube-proxy's ${np}` };
  if (ctx.primary === null) return leave("unread", "cannot tell whose it is: the node's addresses not read");
  if (v.address === ctx.primary.ipv4 || v.address === ctx.primary.ipv6)
    return {
      proven: true,
      why: `masqueraded NodePort on the node's primary address (${ctx.primary.source === "config" ? "--node-ip" : "the default route's source"}), its port in kube-proxy's ${np}`,
    };
  const primaryKnown = ctx.primary.source !== "none";
  return leave(
    "unproven",
    `its port ${v.port} is a NodePort in kube-proxy's ${np}, but ${v.address} is not the node's primary address${primaryKnown ? "" : " (not known: pass --node-ip)"}: kube-proxy served NodePorts on every local address, and another load balancer's NAT virtual server on a local VIP (keepalived) looks the same. Not deleted on a guess; if it is kube-proxy's, remove it by hand`,
  );
}
