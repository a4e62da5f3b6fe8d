// Kernel state that looks like kube-proxy's, at any size: pure text generators (no I/O), so a unit
// test can build N = 10 and check it, and the benchmark can build N = 10,000 the same way.
//
// ipvs mode (pkg/proxy/ipvs/proxier.go): one IPVS virtual server per Service port with its real
// servers (masquerading, weight 1, scheduler rr), every ClusterIP bound to kube-ipvs0, the KUBE-*
// ipsets with their entries, and the ipvs-mode iptables chains (a fixed set: their size does not
// grow with N, which is ipvs mode's point).
// nftables mode (pkg/proxy/nftables/proxier.go, 1.34 layout as in
// test/fixtures/netfilter/sources/kube-proxy-nft-v1.34-ip.nft): `table ip kube-proxy` with a
// service chain per Service port, an endpoint chain per endpoint, the cluster-ips set and the
// service-ips / service-nodeports verdict maps.

/** Every 10th Service is a NodePort Service (port 30000 + i); every 20th is UDP (DNS-like). */
interface ServiceSpec {
  index: number;
  name: string;
  clusterIP: string;
  protocol: "tcp" | "udp";
  port: number;
  nodePort: number | null;
  endpoints: string[];
  targetPort: number;
}

const ipv4 = (base: [number, number], k: number): string =>
  `${base[0]}.${base[1] + Math.floor(k / 65536)}.${Math.floor(k / 256) % 256}.${k % 256}`;

/** Service i of a node with `endpointsPer` endpoints each; deterministic, distinct addresses. */
function service(i: number, endpointsPer: number): ServiceSpec {
  const protocol = i % 20 === 19 ? "udp" : "tcp";
  const endpoints: string[] = [];
  for (let j = 0; j < endpointsPer; j++) endpoints.push(ipv4([10, 128], i * endpointsPer + j + 1));
  return {
    index: i,
    name: `ns${i % 50}/svc${i}`,
    // 10.96.0.0/12 is kube-proxy's default service range.
    clusterIP: ipv4([10, 96], i + 1),
    protocol,
    port: protocol === "udp" ? 53 : 80,
    nodePort: i % 10 === 0 && protocol === "tcp" && i / 10 < 2767 ? 30000 + i / 10 : null,
    endpoints,
    targetPort: protocol === "udp" ? 53 : 8080,
  };
}

export function services(from: number, to: number, endpointsPer: number): ServiceSpec[] {
  const out: ServiceSpec[] = [];
  for (let i = from; i < to; i++) out.push(service(i, endpointsPer));
  return out;
}

/** The node's own address, where NodePort virtual servers listen in ipvs mode. */
const NODE_IP = "172.18.0.10";

/** `ipvsadm -R` input for Services [from, to): virtual servers and their real servers. */
export function ipvsadmRestore(svcs: readonly ServiceSpec[]): string {
  const lines: string[] = [];
  for (const s of svcs) {
    const flag = s.protocol === "udp" ? "-u" : "-t";
    const vips = [`${s.clusterIP}:${s.port}`];
    if (s.nodePort !== null) vips.push(`${NODE_IP}:${s.nodePort}`);
    for (const vip of vips) {
      lines.push(`-A ${flag} ${vip} -s rr`);
      for (const ep of s.endpoints) lines.push(`-a ${flag} ${vip} -r ${ep}:${s.targetPort} -m -w 1`);
    }
  }
  return lines.join("\n") + "\n";
}

/** `ip -batch` input: every ClusterIP on kube-ipvs0 (the link itself is made by the caller). */
export function kubeIpvs0Batch(svcs: readonly ServiceSpec[]): string {
  return svcs.map((s) => `addr add ${s.clusterIP}/32 dev kube-ipvs0`).join("\n") + "\n";
}

/** The KUBE-* ipsets as kube-proxy's ipvs mode creates them (pkg/proxy/ipvs/ipset.go). */
export const IPVS_IPSET_HEADER = [
  "create KUBE-LOOP-BACK hash:ip,port,ip family inet hashsize 1024 maxelem 262144 comment",
  "create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 262144 comment",
  "create KUBE-EXTERNAL-IP hash:ip,port family inet hashsize 1024 maxelem 65536 comment",
  "create KUBE-EXTERNAL-IP-LOCAL hash:ip,port family inet hashsize 1024 maxelem 65536 comment",
  "create KUBE-LOAD-BALANCER hash:ip,port family inet hashsize 1024 maxelem 65536 comment",
  "create KUBE-NODE-PORT-TCP bitmap:port range 0-65535 comment",
  "create KUBE-NODE-PORT-UDP bitmap:port range 0-65535 comment",
  "create KUBE-HEALTH-CHECK-NODE-PORT bitmap:port range 0-65535 comment",
  "create KUBE-IPVS-IPS hash:ip family inet hashsize 1024 maxelem 262144 comment",
].join("\n");

/**
 * `ipset restore` entries for Services [from, to). KUBE-LOOP-BACK holds hairpin entries for the
 * endpoints on this node: one per Service here (a node hosts a share of the endpoints).
 */
export function ipsetEntries(svcs: readonly ServiceSpec[]): string {
  const lines: string[] = [];
  for (const s of svcs) {
    const c = `comment "${s.name}:p${s.port}"`;
    lines.push(`add KUBE-CLUSTER-IP ${s.clusterIP},${s.protocol}:${s.port} ${c}`);
    lines.push(`add KUBE-IPVS-IPS ${s.clusterIP} ${c}`);
    const local = s.endpoints[0];
    if (local !== undefined) lines.push(`add KUBE-LOOP-BACK ${local},${s.protocol}:${s.targetPort},${local}`);
    if (s.nodePort !== null) lines.push(`add KUBE-NODE-PORT-TCP ${s.nodePort} ${c}`);
  }
  return lines.join("\n") + "\n";
}

// --- nftables mode ------------------------------------------------------------------------------

/** kube-proxy's own base objects and rules (1.34 layout), before any Service. */
export const NFT_BASE = `add table ip kube-proxy { comment "rules for kube-proxy" ; }
add set ip kube-proxy cluster-ips { type ipv4_addr ; comment "Active ClusterIPs" ; }
add set ip kube-proxy nodeport-ips { type ipv4_addr ; comment "IPs that accept NodePort traffic" ; }
add map ip kube-proxy firewall-ips { type ipv4_addr . inet_proto . inet_service : verdict ; comment "destinations that are subject to LoadBalancerSourceRanges" ; }
add map ip kube-proxy no-endpoint-nodeports { type inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to service nodeports with no endpoints" ; }
add map ip kube-proxy no-endpoint-services { type ipv4_addr . inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to services with no endpoints" ; }
add map ip kube-proxy service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; comment "ClusterIP, ExternalIP and LoadBalancer IP traffic" ; }
add map ip kube-proxy service-nodeports { type inet_proto . inet_service : verdict ; comment "NodePort traffic" ; }
add chain ip kube-proxy cluster-ips-check
add chain ip kube-proxy filter-prerouting-pre-dnat { type filter hook prerouting priority -110 ; }
add chain ip kube-proxy filter-output-pre-dnat { type filter hook output priority -110 ; }
add chain ip kube-proxy filter-forward { type filter hook forward priority 0 ; }
add chain ip kube-proxy filter-input { type filter hook input priority 0 ; }
add chain ip kube-proxy filter-output { type filter hook output priority 0 ; }
add chain ip kube-proxy firewall-check
add chain ip kube-proxy mark-for-masquerade
add chain ip kube-proxy masquerading
add chain ip kube-proxy nat-output { type nat hook output priority -100 ; }
add chain ip kube-proxy nat-postrouting { type nat hook postrouting priority 100 ; }
add chain ip kube-proxy nat-prerouting { type nat hook prerouting priority -100 ; }
add chain ip kube-proxy nodeport-endpoints-check
add chain ip kube-proxy reject-chain { comment "helper for @no-endpoint-services / @no-endpoint-nodeports" ; }
add chain ip kube-proxy services
add chain ip kube-proxy service-endpoints-check
add rule ip kube-proxy cluster-ips-check ip daddr @cluster-ips reject comment "Reject traffic to invalid ports of ClusterIPs"
add rule ip kube-proxy cluster-ips-check ip daddr { 10.96.0.0/12 } drop comment "Drop traffic to unallocated ClusterIPs"
add rule ip kube-proxy filter-prerouting-pre-dnat ct state new jump firewall-check
add rule ip kube-proxy filter-forward ct state new jump service-endpoints-check
add rule ip kube-proxy filter-forward ct state new jump cluster-ips-check
add rule ip kube-proxy filter-input ct state new jump nodeport-endpoints-check
add rule ip kube-proxy filter-input ct state new jump service-endpoints-check
add rule ip kube-proxy filter-output ct state new jump service-endpoints-check
add rule ip kube-proxy filter-output-pre-dnat ct state new jump firewall-check
add rule ip kube-proxy filter-output ct state new jump cluster-ips-check
add rule ip kube-proxy firewall-check ip daddr . meta l4proto . th dport vmap @firewall-ips
add rule ip kube-proxy mark-for-masquerade mark set mark or 0x4000
add rule ip kube-proxy masquerading mark and 0x4000 == 0 return
add rule ip kube-proxy masquerading mark set mark xor 0x4000
add rule ip kube-proxy masquerading masquerade fully-random
add rule ip kube-proxy nat-output jump services
add rule ip kube-proxy nat-postrouting jump masquerading
add rule ip kube-proxy nat-prerouting jump services
add rule ip kube-proxy nodeport-endpoints-check ip daddr @nodeport-ips meta l4proto . th dport vmap @no-endpoint-nodeports
add rule ip kube-proxy reject-chain reject
add rule ip kube-proxy services ip daddr . meta l4proto . th dport vmap @service-ips
add rule ip kube-proxy services ip daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports
add rule ip kube-proxy service-endpoints-check ip daddr . meta l4proto . th dport vmap @no-endpoint-services
add element ip kube-proxy nodeport-ips { ${NODE_IP} }
`;

// kube-proxy hashes the port name into the chain name (servicePortChainNameBase); any stable
// 8-character tag keeps the shape.
function tag(prefix: string, i: number): string {
  let h = (i + 1) * 2654435761;
  let s = "";
  for (let k = 0; k < 8; k++) {
    s += "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"[h % 32];
    h = Math.floor(h / 32) + k * 7919 + prefix.length;
  }
  return s;
}

function nftChainNames(s: ServiceSpec): { service: string; endpoints: string[] } {
  const sp = `${s.name}/${s.protocol}/p${s.port}`;
  return {
    service: `service-${tag("s", s.index)}-${sp}`,
    endpoints: s.endpoints.map(
      (ep, j) => `endpoint-${tag("e", s.index * 100 + j)}-${sp}__${ep}/${s.targetPort}`,
    ),
  };
}

/** Every Service and endpoint chain, declared (no rules): one transaction, as kube-proxy's first sync. */
export function nftDeclarations(svcs: readonly ServiceSpec[]): string {
  const lines: string[] = [];
  for (const s of svcs) {
    const c = nftChainNames(s);
    lines.push(`add chain ip kube-proxy ${c.service}`);
    for (const e of c.endpoints) lines.push(`add chain ip kube-proxy ${e}`);
  }
  return lines.join("\n") + "\n";
}

/** Rules and map/set elements for Services (chains must exist): loaded in chunks. */
export function nftRulesAndElements(svcs: readonly ServiceSpec[]): string {
  const lines: string[] = [];
  for (const s of svcs) {
    const c = nftChainNames(s);
    const vmap = c.endpoints.map((e, j) => `${j} : goto ${e}`).join(" , ");
    lines.push(
      `add rule ip kube-proxy ${c.service} ip daddr ${s.clusterIP} ip saddr != 10.0.0.0/8 jump mark-for-masquerade`,
      `add rule ip kube-proxy ${c.service} numgen random mod ${c.endpoints.length} vmap { ${vmap} }`,
    );
    c.endpoints.forEach((e, j) => {
      const ep = s.endpoints[j]!;
      lines.push(
        `add rule ip kube-proxy ${e} ip saddr ${ep} jump mark-for-masquerade`,
        `add rule ip kube-proxy ${e} meta l4proto ${s.protocol} dnat to ${ep}:${s.targetPort}`,
      );
    });
    lines.push(
      `add element ip kube-proxy cluster-ips { ${s.clusterIP} }`,
      `add element ip kube-proxy service-ips { ${s.clusterIP} . ${s.protocol} . ${s.port} : goto ${c.service} }`,
    );
    if (s.nodePort !== null) {
      lines.push(`add element ip kube-proxy service-nodeports { tcp . ${s.nodePort} : goto ${c.service} }`);
    }
  }
  return lines.join("\n") + "\n";
}

/** Splits [0, n) into chunks of `size` Services, for loads that must not be one huge transaction. */
export function chunks(n: number, size: number): [number, number][] {
  const out: [number, number][] = [];
  for (let a = 0; a < n; a += size) out.push([a, Math.min(n, a + size)]);
  return out;
}
