import { ipvsNode, kubeProxy, nftablesAfterSwitch, nftablesNode } from "../common.js";
import type { Link, Profile } from "../profile.js";

// aws-vpc-cni: the primary ENI eth0 and a secondary ENI eth1 holding its own primary address; pods sit
// on eni<hash> veths with no host address.
const enis: Link[] = [
  { name: "eth1", kind: "nic", addresses: ["10.10.20.30/16"] },
  { name: "eni3c8a1f2b7de", kind: "veth" },
];
// The EKS add-on's KubeProxyConfiguration (re:Post knowledge center; bottlerocket#4758).
const eksConfig = { metricsBindAddress: "0.0.0.0:10249", nodePortAddresses: null, ipvs: { scheduler: "rr" } };

// nodePortAddresses null: the recorded binary serves the NodePort on every node address, eth1's too.
const al2023Ipvs = ipvsNode("10.10.10.20", kubeProxy("ipvs", "v1.34.3-eksbuild.2", eksConfig), {
  links: enis,
  iptables: ["aws-vpc-cni.rules"],
});

export const profile: Profile = {
  id: "eks-vpc-cni",
  distribution: "Amazon EKS (Amazon Linux 2023, Bottlerocket)",
  plugins: ["Amazon VPC CNI (aws-node)"],
  title: "EKS managed kube-proxy add-on with aws-vpc-cni: ipvs on AL2023, then nftables on 1.36 Bottlerocket",
  sources: [
    "test/profiles/profiles.md P2 (EKS: ConfigMap kube-proxy-config key config, add-on versions v1.34.3-eksbuild.2 and v1.36.0-eksbuild.9, secondary ENIs are real NodePort destinations, #140898)",
    "https://www.repost.aws/knowledge-center/eks-configure-ipvs-kube-proxy (mode ipvs, ipvs.scheduler, metricsBindAddress 0.0.0.0:10249)",
    "https://github.com/bottlerocket-os/bottlerocket/issues/4758 (kube-proxy-config: nodePortAddresses null, add-on v1.34.3-eksbuild.2)",
    "https://github.com/kubernetes/kubernetes/issues/140898 (nftables segfault on every sync, v1.36.0-eksbuild.9 on Bottlerocket; table never fully populated)",
    "test/fixtures/netfilter/sources/aws-vpc-cni.rules (aws/amazon-vpc-cni-k8s pkg/networkutils/network_test.go)",
  ],
  nodes: [
    {
      name: "eks-al2023-ipvs",
      when: "before the switch: AL2023 node, add-on v1.34.3-eksbuild.2 in ipvs mode, a secondary ENI attached",
      state: al2023Ipvs,
      expect: {
        phase: "ipvs",
        phaseSource: "proxyMode",
        verdict: "attention",
        findings: ["ipvs-mode-deprecated", "ipvs-timeouts-set", "nodeport-addresses-shrink"],
        evidence: { "nodeport-addresses-shrink": { secondaryAddresses: ["10.10.20.30 (eth1)"] } },
      },
      why: "a load balancer may target the secondary ENI's address: under nftables mode's `primary` default its NodePort stops answering there, a real thing to check (AWS-* chains and eni veths are not findings)",
    },
    {
      name: "eks-al2023-nft",
      when: "after the switch: AL2023 node, add-on v1.34.3-eksbuild.2 in nftables mode",
      state: nftablesNode("10.10.10.20", kubeProxy("nftables", "v1.34.3-eksbuild.2", eksConfig), {
        links: enis,
        iptables: ["aws-vpc-cni.rules"],
        afterSwitch: true,
      }),
      expect: nftablesAfterSwitch(),
      why: "both tables, kubelet's and the VPC CNI's chains; the switch's own cleanup left the IPv6 proxier's 17 empty KUBE-6-* sets (it destroys the IPv4 names only): leftovers for the cleanup step, nothing broken",
    },
    {
      name: "eks-br-nft-crash",
      when: "after the switch: Bottlerocket node, add-on v1.36.0-eksbuild.9 in nftables mode, nft segfaulting on every sync (#140898)",
      state: nftablesNode(
        "10.10.10.21",
        kubeProxy("nftables", "v1.36.0-eksbuild.9", eksConfig, {
          lastSync: { agoSeconds: 1800 },
          lastQueued: { agoSeconds: 5 },
          healthy: false,
          counters: { kubeproxy_sync_proxy_rules_nftables_sync_failures_total: 61 },
        }),
        { links: enis, iptables: ["aws-vpc-cni.rules"] },
      ),
      expect: {
        phase: "nftables",
        phaseSource: "proxyMode",
        verdict: "unhealthy",
        findings: ["kube-proxy-rules-stale", "kube-proxy-sync-failing", "kube-proxy-unhealthy"],
      },
      why: "broken now: no successful sync for 30 minutes while syncs are queued, the failure counter is up and /healthz says unhealthy; the host nft (none on Bottlerocket) is not the cause and must not be named",
    },
  ],
};
