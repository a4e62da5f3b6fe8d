import { ipvsNode, kubeProxy, nftablesAfterSwitch, nftablesNode } from "../common.js";
import type { Link, Profile } from "../profile.js";

// Azure CNI (transparent mode): pods on VNet addresses behind azv<hash> veths, no bridge, no CNI chains.
const azure: Link[] = [{ name: "azv5b2c7e9d1a4", kind: "veth" }];
// networkProfile.kubeProxyConfig {mode IPVS, ipvsConfig {scheduler LeastConnection, TCPTimeoutSeconds
// 900, TCPFINTimeoutSeconds 120, UDPTimeoutSeconds 300}} as kube-proxy's own config.
const aksIpvs = {
  ipvs: { scheduler: "lc", tcpTimeout: "15m0s", tcpFinTimeout: "2m0s", udpTimeout: "5m0s" },
};

// kube-proxy's virtual servers, recorded with scheduler lc from this config; then switched to nftables.
const ipvsState = ipvsNode("10.224.0.4", kubeProxy("ipvs", "v1.33.5", aksIpvs), {
  links: azure,
});

export const profile: Profile = {
  id: "aks-azure-cni",
  distribution: "AKS (Azure Linux / Ubuntu)",
  plugins: ["Azure CNI"],
  title: "AKS with kubeProxyConfig mode IPVS, LeastConnection and timeouts, moving to NFTABLES",
  sources: [
    "test/profiles/profiles.md P3 (kubeProxyConfig {mode, ipvsConfig {scheduler LeastConnection|RoundRobin, TCPTimeoutSeconds, TCPFINTimeoutSeconds, UDPTimeoutSeconds}}; MicrosoftDocs/azure-docs articles/aks/configure-kube-proxy.md @194ff3f7)",
    "AKS's kube-proxy version string and DaemonSet shape: NOT ESTABLISHED (upstream format used)",
  ],
  nodes: [
    {
      name: "aks-ipvs",
      when: "before the switch: IPVS with LeastConnection and TCP/FIN/UDP timeouts set",
      state: ipvsState,
      expect: {
        phase: "ipvs",
        phaseSource: "proxyMode",
        verdict: "ready",
        findings: ["ipvs-mode-deprecated", "ipvs-scheduler-not-rr", "ipvs-timeouts-set"],
      },
      why: "lc and the timeouts have no nftables equivalent: worth knowing (info), nothing blocks",
    },
    {
      name: "aks-nft",
      when: "after the switch: kubeProxyConfig mode NFTABLES",
      state: nftablesNode("10.224.0.4", kubeProxy("nftables", "v1.33.5"), {
        links: azure,
        afterSwitch: true,
      }),
      expect: nftablesAfterSwitch(),
      why: "the switch's own cleanup left the IPv6 proxier's 17 empty KUBE-6-* sets (it destroys the IPv4 names only): leftovers for the cleanup step, nothing broken",
    },
  ],
};
