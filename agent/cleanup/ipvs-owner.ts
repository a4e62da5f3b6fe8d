import type { VirtualServer } from "../facts/ipvs.js";
import { vsKey } from "../parse/ipvs-proc.js";

/** What cleanup reads to tell kube-proxy's virtual servers from others', or why it could not. */
export type IpvsEvidence =
  | {
      read: true;
      /** Forwarding methods of each virtual server's real servers, by vsKey. */
      forwards: Map<string, string[]>;
      /** Members of each ipset by name ("10.96.0.1,tcp:443", "30080"). */
      sets: Map<string, Set<string>>;
    }
  | { read: false; why: string };

export type IpvsOwner = { owner: "kube-proxy" | "foreign" | "unknown"; why: string };

// kube-proxy's ipvs mode lists every Service IP:port it serves in these (pkg/proxy/ipvs/ipset.go) ...
const SERVICE_SETS = [
  "KUBE-CLUSTER-IP",
  "KUBE-6-CLUSTER-IP",
  "KUBE-EXTERNAL-IP",
  "KUBE-6-EXTERNAL-IP",
  "KUBE-LOAD-BALANCER",
  "KUBE-6-LOAD-BALANCER",
];
// ... and every NodePort in these, by protocol (bitmap:port, or ip,port for SCTP).
const NODE_PORT_SETS: Record<string, string[]> = {
  TCP: ["KUBE-NODE-PORT-TCP", "KUBE-6-NODE-PORT-TCP"],
  UDP: ["KUBE-NODE-PORT-UDP", "KUBE-6-NODE-PORT-UDP"],
  SCTP: ["KUBE-NODE-PORT-SCTP-HASH", "KUBE-6-NODE-PORT-SCTP-HASH"],
};

/**
 * Whose virtual server this is, from what only kube-proxy does: it masquerades to every endpoint
 * (never Route/Tunnel/Local), and it lists each Service address:port and each NodePort in its own
 * ipsets. kube-ipvs0 holding the address counts too, but is not needed: after `ip link delete
 * kube-ipvs0` the sets still say it. A port in the NodePort range alone proves nothing (keepalived).
 */
export function ipvsOwner(
  v: VirtualServer,
  ev: IpvsEvidence,
  kubeIpvs0: ReadonlySet<string> | null,
  local: ReadonlySet<string> | null,
  kubeRouterIps: ReadonlySet<string> | null = null,
): IpvsOwner {
  if (v.protocol === "FWM" || v.address === null || v.port === null)
    return { owner: "foreign", why: "a firewall-mark service: kube-proxy makes none" };
  // Even when a set kube-proxy left names the same ClusterIP:port: kube-router serves it now.
  if (kubeRouterIps?.has(v.address))
    return {
      owner: "foreign",
      why: "its address is on kube-dummy-if: kube-router's service proxy serves it (kube-proxy never binds there)",
    };
  if (!ev.read) return { owner: "unknown", why: `cannot tell whose it is: ${ev.why}` };
  const forwards = ev.forwards.get(vsKey(v));
  if (forwards === undefined)
    return { owner: "unknown", why: "cannot tell whose it is: not in the IPVS table read for cleanup" };
  const other = forwards.filter((f) => f !== "Masq");
  if (other.length > 0)
    return { owner: "foreign", why: `forwards by ${other.join(", ")}: kube-proxy only masquerades` };
  const entry = `${v.address},${v.protocol.toLowerCase()}:${v.port}`;
  const inSet = SERVICE_SETS.find((s) => ev.sets.get(s)?.has(entry));
  if (inSet !== undefined) return { owner: "kube-proxy", why: `masqueraded, and in kube-proxy's ${inSet}` };
  const np = (NODE_PORT_SETS[v.protocol] ?? []).find((s) =>
    ev.sets.get(s)?.has(v.protocol === "SCTP" ? entry : String(v.port)),
  );
  if (np !== undefined) {
    if (local === null)
      return { owner: "unknown", why: "cannot tell whose it is: the node's addresses not read" };
    if (local.has(v.address))
      return { owner: "kube-proxy", why: `masqueraded NodePort on a node address, in kube-proxy's ${np}` };
  }
  if (kubeIpvs0?.has(v.address)) return { owner: "kube-proxy", why: "masqueraded, on kube-ipvs0" };
  return {
    owner: "foreign",
    why: "in none of kube-proxy's ipsets and not on kube-ipvs0: someone else's (keepalived, kube-vip)",
  };
}
