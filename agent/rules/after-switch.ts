import { listed, type Rule } from "./input.js";
import { readCounter } from "./kube-proxy-counters.js";
import { REF } from "./references.js";

// Leftovers and breakage once kube-proxy no longer runs ipvs mode (nftables, iptables after a move, or none).
const isAfter = (phase: string) => phase === "nftables" || phase === "none" || phase === "iptables";

export const LEFTOVER_IDS = new Set([
  "ipvs-virtual-servers-left",
  "kube-ipvs0-left",
  "kube-ipsets-left",
  "ipvs-iptables-chains-left",
  "strict-arp-sysctls-left",
]);

export const kubeIpvs0Left: Rule = ({ facts, phase }, opts) => {
  const k = facts.kubeIpvs0;
  if (!k?.present || !isAfter(phase)) return [];
  const addresses = k.addresses.map((a) => a.address);
  // Without the IPVS table nobody can tell which addresses are backed: say "left", never "black hole".
  const backed = facts.ipvs ? new Set(facts.ipvs.virtualServers.map((v) => v.address)) : null;
  const holes = backed ? addresses.filter((a) => !backed.has(a)) : [];
  if (holes.length > 0) {
    return [
      {
        id: "kube-ipvs0-black-hole",
        severity: "critical",
        stage: "after",
        blocksMigration: false,
        title: `kube-ipvs0 still holds ${holes.length} addresses with no IPVS virtual server behind them: this node answers for those IPs and drops the traffic`,
        evidence: {
          blackHoledCount: holes.length,
          blackHoled: listed(holes, opts.maxListed),
          addressesOnKubeIpvs0: addresses.length,
          operState: k.operState,
        },
        remedy:
          "ip link delete kube-ipvs0   (only ipvs mode recreates it; run once kube-proxy answers nftables on this node)",
        reference: REF.blackHole,
      },
    ];
  }
  return [
    {
      id: "kube-ipvs0-left",
      severity: "warning",
      stage: "after",
      blocksMigration: false,
      title: `kube-ipvs0 is still present (${addresses.length} addresses)`,
      evidence: { addresses: listed(addresses, opts.maxListed), operState: k.operState },
      remedy: "ip link delete kube-ipvs0",
      reference: REF.leftovers,
    },
  ];
};

export const ipvsLeft: Rule = ({ facts, phase }) => {
  const n = facts.ipvs?.virtualServerCount ?? 0;
  if (n === 0 || !isAfter(phase)) return [];
  return [
    {
      id: "ipvs-virtual-servers-left",
      severity: "warning",
      stage: "after",
      blocksMigration: false,
      title: `${n} IPVS virtual servers (${facts.ipvs?.realServerCount ?? 0} real servers) are left in the kernel`,
      evidence: {
        virtualServers: n,
        realServers: facts.ipvs?.realServerCount ?? 0,
        schedulers: Object.keys(facts.ipvs?.schedulers ?? {}),
      },
      remedy: "ipvsadm --clear   (after checking none belong to keepalived or kube-vip)",
      reference: REF.leftovers,
    },
  ];
};

export const ipsetsLeft: Rule = ({ facts, phase }, opts) => {
  const sets = facts.ipsets?.sets.filter((s) => s.kubeProxy) ?? [];
  if (sets.length === 0 || !isAfter(phase)) return [];
  const v6 = sets.filter((s) => s.name.startsWith("KUBE-6-"));
  return [
    {
      id: "kube-ipsets-left",
      severity: "warning",
      stage: "after",
      blocksMigration: false,
      title: `${sets.length} kube-proxy ipsets are left${v6.length > 0 ? ` (${v6.length} IPv6: kube-proxy's own cleanup only destroys the IPv4 ones)` : ""}`,
      evidence: {
        sets: listed(
          sets.map((s) => `${s.name} (${s.type}, ${s.entries} entries)`),
          opts.maxListed,
        ),
        ipv6Sets: v6.length,
      },
      remedy:
        "for s in $(ipset list -name | grep '^KUBE-'); do ipset destroy \"$s\"; done   (after the iptables chains that reference them are gone)",
      reference: REF.leftovers,
    },
  ];
};

export const ipvsChainsLeft: Rule = ({ facts, phase }, opts) => {
  if (phase !== "nftables" && phase !== "none") return [];
  const left = (facts.iptables?.backends ?? []).flatMap((b) =>
    b.kubeChains
      .filter(
        (c) => c.owner === "kube-proxy-ipvs" || c.owner === "kube-proxy" || c.owner === "kube-proxy-iptables",
      )
      .map((c) => `${b.family} ${b.backend} ${c.table}/${c.name} (${c.rules} rules, ${c.owner})`),
  );
  const perService = (facts.iptables?.backends ?? []).reduce(
    (n, b) => n + Object.values(b.patternCounts).reduce((a, c) => a + c, 0),
    0,
  );
  if (left.length === 0 && perService === 0) return [];
  return [
    {
      id: "ipvs-iptables-chains-left",
      severity: "warning",
      stage: "after",
      blocksMigration: false,
      title: `${left.length + perService} kube-proxy iptables chains are left from the previous mode (kubelet's chains are not counted)`,
      evidence: { chains: listed(left, opts.maxListed), perServiceChains: perService },
      remedy:
        "kube-proxy --cleanup with kube-proxy stopped on this node, or proxyscope-agent cleanup; KUBE-FIREWALL (filter), KUBE-KUBELET-CANARY and KUBE-IPTABLES-HINT are kubelet's: keep them",
      reference: REF.leftovers,
    },
  ];
};

export const strictArpLeft: Rule = ({ facts, phase }) => {
  if (phase !== "nftables" && phase !== "none") return [];
  const get = (n: string) => facts.sysctls?.values.find((v) => v.name === n)?.value ?? null;
  const ignore = get("net.ipv4.conf.all.arp_ignore");
  const announce = get("net.ipv4.conf.all.arp_announce");
  if (ignore !== "1" && announce !== "2") return [];
  return [
    {
      id: "strict-arp-sysctls-left",
      severity: "info",
      stage: "after",
      blocksMigration: false,
      title: "strictARP sysctls are still set (harmless without kube-ipvs0)",
      evidence: { "net.ipv4.conf.all.arp_ignore": ignore, "net.ipv4.conf.all.arp_announce": announce },
      remedy:
        "sysctl -w net.ipv4.conf.all.arp_ignore=0; sysctl -w net.ipv4.conf.all.arp_announce=0   (and remove ipvs.strictARP from the kube-proxy config)",
      reference: REF.strictArp,
    },
  ];
};

export const nftablesTableMissing: Rule = ({ facts, runningMode }) => {
  if (runningMode !== "nftables" || facts.nftables === null) return [];
  if (facts.nftables.kubeProxy.length > 0) return [];
  return [
    {
      id: "nftables-table-missing",
      severity: "critical",
      stage: "after",
      blocksMigration: false,
      title: `kube-proxy answers nftables mode but there is no table ip/ip6 ${facts.nftables.kubeProxyTableName}`,
      evidence: {
        tableName: facts.nftables.kubeProxyTableName,
        tables: facts.nftables.tables.map((t) => `${t.family} ${t.name}`),
      },
      remedy:
        "Read kube-proxy's log on this node (kubectl -n kube-system logs <kube-proxy pod>): its syncs are not reaching the kernel",
      reference: REF.verify,
    },
  ];
};

export const localhostNodePortsRejected: Rule = ({ facts, phase, runningMode }) => {
  if (phase !== "nftables") return [];
  const r = readCounter(facts, runningMode, "kubeproxy_nftables_localhost_nodeport_rejected_packets_total");
  if (r.state !== "value" || r.value <= 0) return [];
  return [
    {
      id: "localhost-nodeports-rejected",
      severity: "warning",
      stage: "after",
      blocksMigration: false,
      title: `${r.value} packets to NodePorts on localhost were rejected`,
      evidence: { kubeproxy_nftables_localhost_nodeport_rejected_packets_total: r.value },
      remedy:
        'Kubernetes 1.37+: featureGates: {KubeProxyNFTablesLocalhostNodePorts: true} with nodePortAddresses: ["primary", "localhost"], or repoint those clients',
      reference: REF.localhostNodePorts,
    },
  ];
};
