import type { Finding } from "../report/schema.js";
import { kernelAdvice } from "./kernel-advice.js";
import { compareVersions, listed, versionParts, type Rule } from "./input.js";
import { describeCounter, gauge, readCounter } from "./kube-proxy-counters.js";
import { REF } from "./references.js";
import { kernelCanRunNftables } from "./thresholds.js";
import { classifyVirtualServers } from "./virtual-servers.js";

// Checks that matter while the node still runs ipvs or iptables mode (and are harmless to report after).
const isBefore = (phase: string) => phase === "ipvs" || phase === "iptables";

export const kernelTooOld: Rule = ({ facts, phase }) => {
  const k = facts.kernel;
  if (!k || phase === "nftables" || phase === "none") return [];
  if (kernelCanRunNftables(k)) return [];
  return [
    {
      id: "kernel-too-old-for-nftables",
      severity: "error",
      stage: "before",
      blocksMigration: true,
      title: `Kernel ${k.release} is older than 5.13: kube-proxy will not start in nftables mode`,
      evidence: { kernel: k.release, required: "5.13", os: facts.osRelease?.prettyName ?? null },
      remedy: kernelAdvice(facts.osRelease),
      reference: REF.kernel,
    },
  ];
};

export const nftTooOld: Rule = ({ facts, phase }) => {
  const v = facts.nftVersion;
  const parts = versionParts(v?.version);
  if (!v || !parts || !isBefore(phase)) return [];
  if (compareVersions(parts, [1, 0, 1]) >= 0) return [];
  return [
    {
      id: "nft-too-old",
      severity: "error",
      stage: "before",
      blocksMigration: true,
      title: `Host nft ${v.version} is older than 1.0.1`,
      evidence: {
        nftVersion: v.version,
        source: v.source,
        required: "1.0.1",
        os: facts.osRelease?.prettyName ?? null,
      },
      remedy:
        "Upgrade the host's nftables package to 1.0.1 or newer (Ubuntu 20.04 ships 0.9.3 even on the 5.15 HWE kernel: rebuild on 22.04/24.04), or stay in iptables mode",
      reference: REF.nft,
    },
  ];
};

export const nftModulesMissing: Rule = ({ facts, phase }) => {
  const m = facts.kernelModules;
  if (!m || !m.moduleTreeReadable || phase === "none") return [];
  const absent = m.modules.filter((x) => x.state === "absent").map((x) => x.name);
  if (absent.length === 0) return [];
  return [
    {
      id: "nftables-modules-missing",
      severity: "error",
      stage: "before",
      blocksMigration: phase !== "nftables",
      title: `Kernel modules nftables mode needs are neither loaded, built in nor installed: ${absent.join(", ")}`,
      evidence: { missing: absent, kernel: facts.kernel?.release ?? null },
      remedy:
        "Install the kernel's netfilter modules (e.g. linux-modules-extra on Ubuntu cloud images) or rebuild the node image",
      reference: REF.modules,
    },
  ];
};

export const foreignIpvsUsers: Rule = ({ facts, phase }, opts) => {
  if (!facts.ipvs || phase === "none") return [];
  const { foreign } = classifyVirtualServers(facts, opts);
  if (foreign.length === 0) return [];
  const names = foreign.map((v) =>
    v.fwmark !== null ? `FWM ${v.fwmark}` : `${v.protocol} ${v.address}:${v.port}`,
  );
  return [
    {
      id: "foreign-ipvs-virtual-servers",
      severity: "error",
      stage: "before",
      blocksMigration: phase !== "nftables",
      title: `${foreign.length} IPVS virtual servers are not kube-proxy's (keepalived, kube-vip, ...): nftables mode flushes all IPVS state on every start`,
      evidence: { count: foreign.length, virtualServers: listed(names, opts.maxListed) },
      remedy:
        "Move these VIPs off IPVS (or off this node) before switching: kube-proxy in nftables mode clears the whole IPVS table each time it starts",
      reference: REF.foreignIpvs,
    },
  ];
};

export const nodePortsOnSecondaryAddresses: Rule = ({ facts, phase }, opts) => {
  if (!isBefore(phase) || !facts.addresses) return [];
  const configured = facts.configz?.nodePortAddresses ?? [];
  if (configured.length > 0) return []; // already restricted; nothing shrinks unexpectedly
  const { primary } = facts.addresses;
  const primaries = new Set([primary.ipv4, primary.ipv6].filter((x): x is string => x !== null));
  const secondary = facts.addresses.interfaces
    .filter((i) => i.name !== "kube-ipvs0" && i.name !== "lo")
    .flatMap((i) =>
      i.addresses
        .filter((a) => a.scope === "global" && !primaries.has(a.address))
        .map((a) => `${a.address} (${i.name})`),
    );
  if (secondary.length === 0) return [];
  const { nodePorts } = classifyVirtualServers(facts, opts);
  const onSecondary = nodePorts.filter(
    (v) => v.address !== null && !primaries.has(v.address) && v.address !== "127.0.0.1",
  );
  const busy = onSecondary.filter((v) => v.activeConns + v.inactiveConns > 0);
  return [
    {
      id: "nodeport-addresses-shrink",
      severity: busy.length > 0 ? "error" : "warning",
      stage: "before",
      blocksMigration: false,
      title:
        busy.length > 0
          ? `NodePorts carry traffic on ${busy.length} non-primary address:port pairs that nftables mode (nodePortAddresses: primary) stops serving`
          : `${secondary.length} local addresses besides the primary ones will stop serving NodePorts in nftables mode`,
      evidence: {
        primary: [...primaries],
        primarySource: primary.source,
        secondaryAddresses: listed(secondary, opts.maxListed),
        nodePortVirtualServersOnSecondary: onSecondary.length,
        withConnections: listed(
          busy.map(
            (v) =>
              `${v.protocol} ${v.address}:${v.port} (${v.activeConns} active, ${v.inactiveConns} inactive)`,
          ),
          opts.maxListed,
        ),
      },
      remedy:
        'Inventory who reaches NodePorts on these addresses; if they must keep working set nodePortAddresses explicitly (e.g. ["0.0.0.0/0"] restores the old reach) before switching',
      reference: REF.nodePortAddresses,
    },
  ];
};

export const localhostNodePorts: Rule = ({ facts, phase, runningMode }) => {
  if (phase !== "iptables") return [];
  const r = readCounter(facts, runningMode, "kubeproxy_iptables_localhost_nodeports_accepted_packets_total");
  if (r.state !== "value" || r.value <= 0) return [];
  return [
    {
      id: "localhost-nodeports-in-use",
      severity: "warning",
      stage: "before",
      blocksMigration: false,
      title: `Something connects to NodePorts on 127.0.0.1 (${r.value} packets accepted): nftables mode does not serve them by default`,
      evidence: { kubeproxy_iptables_localhost_nodeports_accepted_packets_total: r.value },
      remedy:
        'On Kubernetes 1.37+: featureGates: {KubeProxyNFTablesLocalhostNodePorts: true} and nodePortAddresses: ["primary", "localhost"]; otherwise point those clients at the node\'s address',
      reference: REF.localhostNodePorts,
    },
  ];
};

export const conntrackWorkaround: Rule = ({ facts, phase, runningMode }) => {
  if (!isBefore(phase)) return [];
  const out: Finding[] = [];
  const r = readCounter(facts, runningMode, "kubeproxy_iptables_ct_state_invalid_dropped_packets_total");
  const k = facts.kernel;
  const oldKernel = k !== null && compareVersions([k.major, k.minor], [6, 1]) < 0;
  const liberal = facts.sysctls?.values.find(
    (v) => v.name === "net.netfilter.nf_conntrack_tcp_be_liberal",
  )?.value;
  const dropped = r.state === "value" ? r.value : 0;
  if ((dropped > 0 && oldKernel) || liberal === "1") {
    out.push({
      id: "conntrack-workaround-relied-on",
      severity: "warning",
      stage: "before",
      blocksMigration: false,
      title:
        dropped > 0
          ? `${dropped} packets dropped as conntrack-invalid on kernel ${k?.release}: nftables mode does not install that workaround`
          : "nf_conntrack_tcp_be_liberal is set on this node",
      evidence: {
        kubeproxy_iptables_ct_state_invalid_dropped_packets_total: describeCounter(r),
        kernel: k?.release ?? null,
        nf_conntrack_tcp_be_liberal: liberal ?? null,
      },
      remedy:
        "Carry the workaround into nftables mode: conntrack.tcpBeLiberal: true (--conntrack-tcp-be-liberal)",
      reference: REF.conntrack,
    });
  }
  return out;
};

export const hostFirewall: Rule = ({ facts, phase }, opts) => {
  if (!isBefore(phase)) return [];
  const signs: string[] = [];
  for (const t of facts.nftables?.firewalls ?? [])
    signs.push(`nft table ${t.family} ${t.name} (${t.kind}; ${t.hooks.join(", ")})`);
  const accepts: string[] = [];
  for (const b of facts.iptables?.backends ?? []) {
    for (const [chain, policy] of Object.entries(b.policies)) {
      if ((chain === "filter/INPUT" || chain === "filter/FORWARD") && policy === "DROP") {
        signs.push(`${b.family} ${b.backend} ${chain} policy DROP`);
      }
    }
    for (const [chain, rules] of Object.entries(b.firewallChains))
      signs.push(`${b.family} ${b.backend} chain ${chain} (${rules} rules)`);
    for (const a of b.nodePortAccepts)
      accepts.push(`${a.table}/${a.chain}: ${a.packets} packets, ${a.bytes} bytes: ${a.rule}`);
  }
  if (signs.length === 0) return [];
  return [
    {
      id: "host-firewall-needs-nodeport-range",
      severity: "warning",
      stage: "before",
      blocksMigration: false,
      title: "A host firewall filters this node: nftables mode will not open NodePorts in it for you",
      evidence: {
        firewall: listed(signs, opts.maxListed),
        kubeProxyAcceptRules: listed(accepts, opts.maxListed),
      },
      remedy:
        "Open the NodePort range (default 30000-32767/tcp,udp) and health-check ports in the host firewall before switching",
      reference: REF.firewall,
    },
  ];
};

export const foreignChainReferences: Rule = ({ facts }, opts) => {
  const jumps = (facts.iptables?.backends ?? []).flatMap((b) =>
    b.foreignJumps.map((j) => `${b.family} ${b.backend} ${j.table}/${j.chain} -> ${j.target}: ${j.rule}`),
  );
  if (jumps.length === 0) return [];
  return [
    {
      id: "foreign-rules-reference-kube-chains",
      severity: "warning",
      stage: "before",
      blocksMigration: false,
      title: `${jumps.length} rules outside kube-proxy jump into KUBE-* chains by name; they break silently when those chains go`,
      evidence: { count: jumps.length, rules: listed(jumps, opts.maxListed) },
      remedy:
        "Rewrite them against your own chains or an nftables table hooked at the same priority; kube-proxy's chains are not API",
      reference: REF.chainsNotApi,
    },
  ];
};

export const ipvsScheduler: Rule = ({ facts, phase }) => {
  if (phase !== "ipvs") return [];
  const configured = facts.configz?.ipvs.scheduler ?? "";
  const seen = Object.keys(facts.ipvs?.schedulers ?? {}).filter((s) => s !== "rr");
  if ((configured === "" || configured === "rr") && seen.length === 0) return [];
  return [
    {
      id: "ipvs-scheduler-not-rr",
      severity: "info",
      stage: "before",
      blocksMigration: false,
      title: `IPVS scheduler ${configured || seen.join(", ")} has no nftables equivalent (balancing becomes random)`,
      evidence: { configured: configured || null, schedulersInTable: seen, perService: false },
      remedy:
        "Nothing is lost that worked: lc counted only this node's connections and every real server has weight 1. For stickiness use Service sessionAffinity: ClientIP; for locality internalTrafficPolicy: Local",
      reference: REF.scheduler,
    },
  ];
};

const DEFAULT_TIMEOUTS = { tcp: 900, tcpFin: 120, udp: 300 };
export const ipvsTimeouts: Rule = ({ facts, phase }) => {
  if (phase !== "ipvs") return [];
  const c = facts.configz?.ipvs;
  const configured = [c?.tcpTimeout, c?.tcpFinTimeout, c?.udpTimeout].filter(
    (x) => x && x !== "0s" && x !== "0",
  );
  const t = facts.ipvs?.timeouts;
  const changed =
    t &&
    (t.tcp !== DEFAULT_TIMEOUTS.tcp ||
      t.tcpFin !== DEFAULT_TIMEOUTS.tcpFin ||
      t.udp !== DEFAULT_TIMEOUTS.udp);
  if (configured.length === 0 && !changed) return [];
  return [
    {
      id: "ipvs-timeouts-set",
      severity: "info",
      stage: "before",
      blocksMigration: false,
      title: "IPVS connection timeouts are tuned; nftables mode has no equivalent setting",
      evidence: {
        tcpTimeout: c?.tcpTimeout ?? null,
        tcpFinTimeout: c?.tcpFinTimeout ?? null,
        udpTimeout: c?.udpTimeout ?? null,
        kernel: t ? `${t.tcp} ${t.tcpFin} ${t.udp}` : null,
      },
      remedy:
        "Tune the equivalent conntrack timeouts (conntrack.tcpEstablishedTimeout, tcpCloseWaitTimeout, udpTimeout) if clients depended on them",
      reference: REF.scheduler,
    },
  ];
};

export const etpLocalWithoutEndpoints: Rule = ({ facts, phase }) => {
  if (phase !== "ipvs") return [];
  const n = gauge(facts, "kubeproxy_sync_proxy_rules_no_local_endpoints_total");
  if (n === null || n <= 0) return [];
  return [
    {
      id: "etp-local-without-local-endpoints",
      severity: "warning",
      stage: "before",
      blocksMigration: false,
      title: `${n} Services with a Local traffic policy have no endpoint on this node: ipvs mode forwards their external traffic elsewhere, nftables mode drops it`,
      evidence: { kubeproxy_sync_proxy_rules_no_local_endpoints_total: n },
      remedy:
        "Check those Services' externalTrafficPolicy: Local and where their pods run before switching this node",
      reference: REF.etpLocal,
    },
  ];
};

// First patch release of each minor carrying "Fix kube-proxy on systems with nft 1.1.3" (kubernetes/kubernetes
// #137501, cherry-picked as #137809 to 1.33.11, #137808 to 1.34.7, #137807 to 1.35.4; in 1.36.0). Minors
// before 1.33 never got it.
const NFT_113_FIXED_IN: Record<number, number> = { 33: 11, 34: 7, 35: 4 };

export function kubeProxyHasNft113Fix(version: number[]): boolean {
  const [major, minor, patch] = version as [number, number, number];
  if (major !== 1) return major > 1;
  if (minor >= 36) return true;
  const fixed = NFT_113_FIXED_IN[minor];
  return fixed !== undefined && patch >= fixed;
}

export const nftTooNewForKubeProxy: Rule = ({ facts, phase }) => {
  const host = versionParts(facts.nftVersion?.version);
  const kp = versionParts(facts.kubeProxyMetrics?.gitVersion);
  if (!host || !kp || phase === "none") return [];
  if (compareVersions(host, [1, 1, 3]) < 0 || kubeProxyHasNft113Fix(kp)) return [];
  const after = phase === "nftables";
  return [
    {
      id: "nft-host-newer-than-kube-proxy-supports",
      severity: after ? "critical" : "error",
      stage: after ? "any" : "before",
      blocksMigration: !after,
      title: `Host nft ${facts.nftVersion?.version} with kube-proxy ${facts.kubeProxyMetrics?.gitVersion}: nftables-mode syncs crash on this combination`,
      evidence: {
        nftVersion: facts.nftVersion?.version ?? null,
        kubeProxyVersion: facts.kubeProxyMetrics?.gitVersion ?? null,
        fixedIn: "v1.33.11, v1.34.7, v1.35.4, v1.36.0",
      },
      remedy:
        "Upgrade kube-proxy to a release with the fix (kubernetes/kubernetes#137501) before switching this node to nftables mode",
      reference: REF.nft,
    },
  ];
};
