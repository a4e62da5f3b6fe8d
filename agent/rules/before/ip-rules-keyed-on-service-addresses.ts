import { BlockList, isIP } from "node:net";
import type { IpRule } from "../../facts/ip-rules.js";
import { kubeIpvs0ServiceIps } from "../../view/kube-ipvs0.js";
import { listed, rule } from "../rule.js";

// ipvs mode binds every Service IP on kube-ipvs0 (pkg/proxy/ipvs/proxier.go v1.34.4, syncService ->
// EnsureAddressBind) and IPVS rewrites the destination in LOCAL_IN / LOCAL_OUT, after the routing decision,
// routing the rewritten packet itself; nftables mode binds nothing and DNATs in prerouting / output
// (pkg/proxy/nftables/proxier.go v1.34.4, the nat chains at dstnat priority), so routing sees the
// endpoint's address. A policy rule selecting on a Service address no longer sees the packets it did.

type Family = "ipv4" | "ipv6";

function selects(addr: string, len: number | null, ips: readonly string[]): string[] {
  const family: Family | null = isIP(addr) === 4 ? "ipv4" : isIP(addr) === 6 ? "ipv6" : null;
  if (family === null) return [];
  const bits = len ?? (family === "ipv4" ? 32 : 128);
  // A zero-length prefix selects everything: it is not keyed on any address.
  if (bits === 0) return [];
  const list = new BlockList();
  list.addSubnet(addr, bits, family);
  return ips.filter((ip) => isIP(ip) === (family === "ipv4" ? 4 : 6) && list.check(ip, family));
}

function serviceIpsOf(r: IpRule, ips: readonly string[]): string[] {
  const from = r.src === "all" ? [] : selects(r.src, r.srcLen, ips);
  const to = r.dst === null ? [] : selects(r.dst, r.dstLen, ips);
  return [...new Set([...from, ...to])];
}

export const ipRulesOnServiceAddresses = rule({
  findings: {
    "ip-rules-keyed-on-service-addresses": {
      severity: "warning",
      stage: "before",
      tags: ["measure-before-switch"],
    },
  },
  needs: ["ipRules", "kubeIpvs0", "proxyMode"],
  evaluate({ facts, view }, opts) {
    // kube-proxy's own answer of ipvs: on a guess the addresses on kube-ipvs0 may be anyone's.
    if (view.runningMode !== "ipvs" || !facts.ipRules || !facts.kubeIpvs0) return [];
    const ips = kubeIpvs0ServiceIps(facts.kubeIpvs0);
    if (ips.length === 0) return [];
    const hits: string[] = [];
    const covered = new Set<string>();
    for (const f of facts.ipRules.families) {
      for (const r of f.rules) {
        const on = serviceIpsOf(r, ips);
        if (on.length === 0) continue;
        for (const ip of on) covered.add(ip);
        const shown = on.slice(0, 3).join(", ") + (on.length > 3 ? ` and ${on.length - 3} more` : "");
        hits.push(`${r.text} (selects Service IPs on kube-ipvs0: ${shown})`);
      }
    }
    if (hits.length === 0) return [];
    return [
      {
        id: "ip-rules-keyed-on-service-addresses",
        severity: "warning",
        stage: "before",
        blocksMigration: false,
        title: `${hits.length} ip rule entries select on Service addresses bound on kube-ipvs0: nftables mode DNATs before routing and binds no Service IP, so they stop applying as they do now`,
        evidence: {
          count: hits.length,
          rules: listed(hits, opts.maxListed),
          serviceIpsSelected: covered.size,
        },
        remedy:
          "Find who installs each rule (a CNI, a VPN, a hand-made policy route) and key it on what routing sees in nftables mode: the endpoints' (pod) addresses or a firewall mark set in nftables, not the Service IP; check on the canary with `ip route get <endpoint-ip> from <client-ip> iif <dev>`",
      },
    ];
  },
});
