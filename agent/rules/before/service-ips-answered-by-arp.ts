import { kubeIpvs0ServiceIps } from "../../view/kube-ipvs0.js";
import { onLinkOfOtherInterfaces } from "../../view/on-link.js";
import { listed, rule } from "../rule.js";
import { sysctlValue } from "../../facts/host.js";

/**
 * In ipvs mode every Service IP is a local address on kube-ipvs0 (kubernetes/kubernetes, read on master:
 * pkg/proxy/ipvs/proxier.go syncService: netlinkHandle.EnsureAddressBind(serv.Address, defaultDummyDevice)),
 * and with strictARP off (arp_ignore=0, the default; proxier.go NewProxier sets arp_ignore=1 /
 * arp_announce=2 only when strictARP is on) Linux answers ARP for any local address on any interface. So
 * an externalIP or LoadBalancer IP inside a node's on-link prefix is reachable from that segment with no
 * announcer at all (k/k#59976, k/k#72779, metallb/metallb#637). nftables mode binds nothing: unless
 * MetalLB, kube-vip or BGP announces the IP, it goes dark at the switch. The agent cannot see an
 * announcer, so this is a warning to confirm, not a block.
 */
export const serviceIpsAnsweredByArp = rule({
  findings: {
    "service-ips-answered-by-arp": {
      severity: "warning",
      stage: "before",
      tags: ["measure-before-switch"],
    },
  },
  needs: ["addresses", "sysctls", "kubeIpvs0", "ipvs"],
  evaluate({ facts, view: { phase } }, opts) {
    if (phase !== "ipvs" || !facts.addresses || !facts.sysctls || !facts.kubeIpvs0) return [];
    const get = (n: string) => sysctlValue(facts.sysctls, n);
    const ignore = get("net.ipv4.conf.all.arp_ignore");
    const announce = get("net.ipv4.conf.all.arp_announce");
    // arp_ignore >= 1 (strictARP): only addresses of the receiving interface are answered, so kube-ipvs0's
    // never were: whatever reaches them today (an announcer) is not kube-proxy. A missing file is not
    // strictARP: it is said as "not read" and the IPs still listed.
    if (ignore !== null && Number(ignore) >= 1) return [];
    const onLink = onLinkOfOtherInterfaces(
      facts.addresses,
      kubeIpvs0ServiceIps(facts.kubeIpvs0),
      "kube-ipvs0",
    );
    if (onLink.length === 0) return [];
    const ips = new Set(onLink.map((o) => o.ip));
    const busy = (facts.ipvs?.virtualServers ?? []).filter(
      (v) => v.address !== null && ips.has(v.address) && v.activeConns + v.inactiveConns > 0,
    );
    return [
      {
        id: "service-ips-answered-by-arp",
        severity: "warning",
        stage: "before",
        blocksMigration: false,
        title: `${onLink.length} Service IPs on kube-ipvs0 sit in this node's on-link prefix and are reached by the node's ARP answers; nftables mode answers none`,
        evidence: {
          serviceIpsOnLink: listed(
            onLink.map((o) => `${o.ip} (in ${o.iface}'s ${o.prefix})`),
            opts.maxListed,
          ),
          withConnections:
            facts.ipvs === null
              ? "not read: the IPVS table could not be read"
              : listed(
                  busy.map(
                    (v) =>
                      `${v.protocol} ${v.address}:${v.port} (${v.activeConns} active, ${v.inactiveConns} inactive)`,
                  ),
                  opts.maxListed,
                ),
          "net.ipv4.conf.all.arp_ignore": ignore ?? "not read",
          "net.ipv4.conf.all.arp_announce": announce ?? "not read",
        },
        remedy:
          "Confirm who announces these IPs (MetalLB speaker in L2 mode, kube-vip, BGP; `arping -I <iface> <ip>` from another host on the segment, compare the MAC with the nodes'); if nothing but kube-proxy's kube-ipvs0 does, deploy an announcer (MetalLB L2 / kube-vip) for them before switching",
      },
    ];
  },
});
