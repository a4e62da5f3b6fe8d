// Where each cluster finding comes from: the field guide's sections and the documents it cites.
export const CREF = {
  pin: "Guide: 1. どのモードであれ、まず固定する; kubectl -n kube-system get configmap kube-proxy -o jsonpath='{.data.config\\.conf}' | grep 'mode:'",
  daemonSetArgs:
    "Guide: kubectl -n kube-system get ds kube-proxy -o jsonpath='{.spec.template.spec.containers[0].args}'",
  gates:
    "Guide: featureGates (KubeProxyIPVS 1.37 GA gate, off by default in 1.40; KubeProxyNFTablesLocalhostNodePorts alpha)",
  stages:
    "KEP-5495: 1.35 warning + IPVSDeprecation event, 1.37 KubeProxyIPVS gate, 1.40 off by default, 1.43 removed, 1.46 gate removed",
  kubeadm:
    "Guide: 切り替えは 1 ノードずつ (kubeadm upgrade regenerates the kube-proxy ConfigMap); Upgrading kubeadm clusters",
  ipvsBlock: "Guide: 5. ipvs ブロックと strictARP の設定を削除する",
  sessionAffinity:
    "Guide: sticky clients -> Service .spec.sessionAffinity: ClientIP (survives the migration)",
  nodePorts: "Guide: 移行後に挙動が変わる 4 つのこと (nftables defaults to --nodeport-addresses primary)",
  etpLocal: "DESIGN.md: externalTrafficPolicy Local with no local endpoint: ipvs forwards, nftables drops",
  kernels: "Guide: このノード群は nftables モードで動くのか (Linux 5.13+, no fallback)",
  canary: "Guide: 4. 1 台、丸 1 営業日、それからプール (pause the DaemonSet rollout: maxUnavailable 1)",
  configSource:
    "DESIGN.md: where the config really comes from (ConfigMap vs DaemonSet args vs static pod vs the distribution); test/profiles/upstream-facts.md §(i)",
  noKubeProxy:
    "Guide: kubectl -n kube-system get ds -l k8s-app=kube-proxy (nothing: the CNI implements Services)",
} as const;
