import { kubeProxy, ipvsNode } from "../common.js";
import type { Profile } from "../profile.js";

// An on-prem kubeadm node that also runs keepalived in LVS mode: keepalived holds a VIP on eth0 and programs
// its own IPVS virtual server for it, on a port that happens to lie inside the NodePort range but is no
// NodePort (kube-proxy's KUBE-NODE-PORT-TCP holds 30080 only). kube-proxy in ipvs mode still makes its own
// NodePort virtual servers on every local address, the VIP included.
const NODE_IP = "172.18.0.20";
const VIP = "172.18.0.100";

const keepalivedVs = {
  proto: "tcp" as const,
  address: VIP,
  port: 30443,
  // keepalived.conf virtual_server: lb_algo wlc, lb_kind DR (ipvsadm -g).
  scheduler: "wlc",
  reals: [
    { address: "172.18.0.21", port: 30443, method: "route" as const },
    { address: "172.18.0.22", port: 30443, method: "route" as const },
  ],
};

export const profile: Profile = {
  id: "kubeadm-keepalived",
  distribution: "kubeadm (on-prem, keepalived on the node)",
  plugins: ["keepalived LVS (a virtual server of its own on a node VIP)"],
  title:
    "kubeadm node in ipvs mode sharing IPVS with keepalived, whose virtual server sits on a port inside the NodePort range",
  sources: [
    "kube-proxy ipvs mode keeps every NodePort in KUBE-NODE-PORT-TCP/-UDP/-SCTP-HASH (kubernetes/kubernetes pkg/proxy/ipvs/ipset.go) and binds NodePort virtual servers on every local address but kube-ipvs0 (pkg/proxy/ipvs/proxier.go syncProxyRules)",
    "nftables mode flushes the whole IPVS table when it starts: cmd/kube-proxy/app/server_linux.go platformCleanup (!isIPTablesBased(mode)) -> pkg/proxy/ipvs/cleanup.go cleanupLeftovers ipvs.Flush()",
    "keepalived.conf(5): virtual_server <VIP> <port> { lb_algo wlc; lb_kind DR; real_server ... } programs IPVS through netlink, as ipvsadm -A/-a -g does",
    "kube-proxy v1.34 /configz (internal type) and metrics: test/standins/kube-proxy.ts",
  ],
  nodes: [
    {
      name: "kubeadm-keepalived",
      when: "before the switch: kube-proxy v1.34 in ipvs mode (scheduler rr), keepalived's VIP 172.18.0.100 with its own virtual server on :30443",
      // kube-proxy's NodePort 30080 on the VIP too (recorded with the VIP on the node): ipvs mode serves
      // NodePorts on every local address. keepalived's virtual server beside kube-proxy's own.
      state: ipvsNode(
        NODE_IP,
        kubeProxy("ipvs", "v1.34.3", { ipvs: { scheduler: "rr", strictARP: false } }),
        {
          record: { eth0: [`${VIP}/32`] },
          ipvs: [keepalivedVs],
        },
      ),
      expect: {
        phase: "ipvs",
        phaseSource: "proxyMode",
        verdict: "blocked",
        findings: [
          "foreign-ipvs-virtual-servers",
          "ipvs-mode-deprecated",
          "ipvs-timeouts-set",
          "nodeport-addresses-shrink",
        ],
        evidence: {
          "foreign-ipvs-virtual-servers": { virtualServers: ["TCP 172.18.0.100:30443"] },
          // kube-proxy's own NodePort on the VIP only: keepalived's virtual server is not a NodePort.
          "nodeport-addresses-shrink": { nodePortVirtualServersOnSecondary: 1 },
        },
      },
      why: "port 30443 is inside 30000-32767 but kube-proxy's KUBE-NODE-PORT-TCP, which was read, does not hold it: the virtual server is keepalived's, and nftables mode would flush it on its first start, so the switch is blocked until the VIP moves off IPVS. kube-proxy's NodePort 30080 on the VIP (a secondary address) stops answering under nodePortAddresses primary: a warning about kube-proxy's virtual server alone. keepalived's wlc is no kube-proxy scheduler: kube-proxy's config says rr, so ipvs-scheduler-not-rr does not fire",
    },
  ],
};
