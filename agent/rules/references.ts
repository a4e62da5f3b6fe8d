// Where each finding comes from: the field guide's sections and the upstream documents it cites.
export const REF = {
  kernel: "Guide: このノード群は nftables モードで動くのか (nftables mode needs Linux 5.13+); KEP-5495",
  nft: "DESIGN.md: host nft older than 1.0.1 / 1.1.3 with older kube-proxy; kubernetes.io Virtual IPs and Service Proxies",
  nftUdata:
    "kubernetes/kubernetes#136786 (reopened), #137501, #140405 (v1.37.0), #140898; microsoft/azurelinux#17760 (nft 1.1.2+ set udata)",
  nftMinimum:
    "kubernetes.io blog 2025-02-28 (nftables mode: host nft >= 1.0.0); pkg/proxy/nftables getNFTablesInterface; departs from the guide's 'Ubuntu 20.04 HWE is fine'",
  modules: "kubernetes.io Virtual IPs and Service Proxies (nftables mode); pkg/proxy/nftables",
  foreignIpvs: "DESIGN.md: kube-proxy in nftables mode flushes all IPVS state on every start (KEP-3866)",
  nodePortAddresses: "Guide: 移行後に挙動が変わる 4 つのこと (NodePort on all local addresses -> primary)",
  localhostNodePorts: "Guide: localhost NodePorts; KubeProxyNFTablesLocalhostNodePorts (1.37 alpha)",
  conntrack: "Guide: conntrack workaround not installed by nftables mode; --conntrack-tcp-be-liberal",
  firewall: "Guide: kube-proxy no longer opens the host firewall for NodePorts",
  chainsNotApi: "Kubernetes blog: Kubernetes's iptables chains are not API",
  scheduler: "Guide: ipvs モードの実体と、記憶されている姿 (lc is per client node; no per-Service scheduler)",
  leftovers:
    "Guide: ipvs が残していくもの (cleanup: ipvsadm --clear, ip link delete kube-ipvs0, ipset destroy)",
  blackHole: "Guide: stale kube-ipvs0 addresses black-hole ClusterIPs on this node",
  strictArp: "Guide: strictARP sysctls are set at runtime and do not revert; MetalLB installation",
  verify: "Guide: 祈るのではなく検証する (verify.sh); Kubernetes metrics reference",
  stages: "KEP-5495: 1.35 warning, 1.37 KubeProxyIPVS gate, 1.40 off by default, 1.43 removed",
  etpLocal:
    "DESIGN.md: internal/externalTrafficPolicy Local with no local endpoint: ipvs forwards, nftables drops (pkg/proxy/ipvs/proxier.go syncEndpoint, k/k#97081; pkg/proxy/nftables/proxier.go)",
  parity:
    "Issue #17: per-Service parity, IPVS before vs kube-proxy's nftables maps and chains after (pkg/proxy/nftables/proxier.go chain names)",
  kubeProxyFree: "Guide: もう 1 つの答え：kube-proxy を動かさない (Cilium/Calico eBPF)",
} as const;
