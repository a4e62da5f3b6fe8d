import { repositoryFileUrl } from "../../../common/finding-page.js";

/** The table of docs/ipvs-to-nftables.md these lines cite. */
export const DOC = `${repositoryFileUrl("docs/ipvs-to-nftables.md")}#ipvs--nftables`;

/** One row of that table as a Service's change: the finding that shows it, what changes, why, what to do. */
export interface Row {
  row: number;
  finding: string;
  change: string;
  source: string;
  todo: string;
}

/** The rows that apply to single Services, by what they are about. */
export const ROWS = {
  nodePorts: {
    row: 1,
    finding: "nodeport-addresses-shrink",
    change:
      "its NodePorts answer only on the nodes' primary addresses (nftables mode defaults nodePortAddresses to primary)",
    source: "nftables Init default; ipvs syncProxyRules GetAllLocalAddressesExcept",
    todo: 'move clients of its NodePorts to the primary addresses, or have the platform team set nodePortAddresses (e.g. ["0.0.0.0/0"]) before the switch',
  },
  healthCheck: {
    row: 2,
    finding: "health-check-nodeports-shrink",
    change:
      "its health-check NodePort answers only on the nodes' primary addresses: a load balancer checking another address sees the node as down",
    source: "service_health.go newServiceHealthServer",
    todo: "confirm the load balancer health-checks the nodes' primary addresses; otherwise ask for nodePortAddresses to be set before the switch",
  },
  arp: {
    row: 3,
    finding: "service-ips-answered-by-arp",
    change:
      "its external/LoadBalancer IPs stop being answered by ARP: nftables mode binds nothing on kube-ipvs0",
    source: "ipvs proxier (kube-ipvs0, strictARP); kubernetes/kubernetes#59976, #72779",
    todo: "make sure an announcer (MetalLB L2, kube-vip, BGP) announces these IPs before the switch",
  },
  cut: {
    row: 4,
    finding: "ipvs-connections-cut-at-switch",
    change: "its established connections through IPVS are cut at the switch",
    source: "server_linux.go platformCleanup → ipvs CleanupLeftovers",
    todo: "make clients reconnect on failure, or agree a window: the platform team drains these nodes first",
  },
  etpLocal: {
    row: 8,
    finding: "cluster-services-etp-local",
    change:
      "in-cluster callers of its LoadBalancer IP, externalIPs or NodePort go to all endpoints, not the node-local one",
    source:
      'ipvs syncEndpoint(…, ExternalPolicyLocal(), …); nftables "locally-originated pod -> external destination traffic … is subject to neither form of traffic policy"',
    todo: "check in-cluster clients that rely on a node-local endpoint (call the ClusterIP, or use internalTrafficPolicy: Local)",
  },
  serviceIpOther: {
    row: 18,
    finding: "service-ips-host-ports-close",
    change:
      "pings to its Service IPs and connections to other ports of them stop: nftables mode rejects them (ipvs before KUBE-IPVS-FILTER let host services answer)",
    source: "ipvs KUBE-IPVS-FILTER (kubernetes/kubernetes#108460); nftables cluster-ips-check",
    todo: "point whatever pings this Service's IP or reaches a host port through it at the node's address or the Service's port",
  },
  affinity: {
    row: 9,
    finding: "cluster-services-session-affinity",
    change:
      "ClientIP affinity is per endpoint across all of its IPs (with a refreshed timeout), not per IPVS virtual server",
    source: 'KEP-3866 Non-Goals ("the same behavior as iptables … different from ipvs"); ipvs FlagPersistent',
    todo: "check clients that reach it by more than one IP or port and rely on separate stickiness",
  },
  scheduler: {
    row: 10,
    finding: "ipvs-scheduler-not-rr",
    change: "its endpoints are picked at random: the IPVS scheduler (and sh/mh stickiness) goes",
    source: 'website "virtual IPs" (ipvs section)',
    todo: "use sessionAffinity: ClientIP for stickiness, internalTrafficPolicy: Local for locality",
  },
} as const satisfies Record<string, Row>;
