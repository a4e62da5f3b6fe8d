import type { Profile } from "../profile.js";

export const profile: Profile = {
  id: "kube-router-proxy",
  distribution: "kubeadm (Debian 12), kube-proxy not deployed",
  plugins: ["kube-router (CNI, network policy and IPVS service proxy)"],
  title: "kube-router as the service proxy: IPVS virtual servers on kube-dummy-if, no kube-proxy",
  sources: [
    "test/profiles/profiles.md Plugins: kube-router as service proxy (Masq VS for ClusterIPs/NodePorts on kube-dummy-if, no kube-ipvs0, no kube-proxy: phase must not be ipvs; other-service-proxy-ipvs; must not fire kube-ipvs0-*, ipvs-virtual-servers-left or cleanup remedies)",
    "cloudnativelabs/kube-router @7c2c2779 pkg/controllers/proxy (network_services_controller.go: kube-dummy-if, kube-bridge, KUBE-ROUTER-SERVICES, kube-router-svip/-svip-prt/-local-ips; Masq real servers, setupNodePortServices)",
    "cloudnativelabs/kube-router @7c2c2779 network_services_controller.go Run: the sysctls it sets on start (vs/conntrack=1, vs/expire_nodest_conn=1, vs/expire_quiescent_template=1, vs/conn_reuse_mode=0, conf/all/arp_ignore=1, conf/all/arp_announce=2); docs/kubeadm.md (all-features DaemonSet, kube-proxy DaemonSet deleted)",
    "test/fixtures/netfilter/sources/kube-router-proxy.rules, .ipset; kube-router-netpol.rules, .ipset",
  ],
  nodes: [
    {
      name: "kube-router-ipvs",
      when: "any time: kube-router proxies Services with IPVS; there is no kube-proxy to migrate",
      state: {
        kernel: "uml",
        links: [
          { name: "eth0", kind: "nic", addresses: ["172.18.0.30/16"] },
          { name: "kube-dummy-if", kind: "dummy", addresses: ["10.96.0.1/32", "10.96.0.10/32"] },
          { name: "kube-bridge", kind: "bridge", addresses: ["10.244.3.1/24"] },
        ],
        ipsets: ["kube-router-proxy.ipset", "kube-router-netpol.ipset"],
        iptables: ["kubelet.rules", "kube-router-proxy.rules", "kube-router-netpol.rules"],
        ipvs: [
          {
            proto: "tcp",
            address: "10.96.0.1",
            port: 443,
            scheduler: "rr",
            reals: [{ address: "172.18.0.2", port: 6443 }],
          },
          {
            proto: "udp",
            address: "10.96.0.10",
            port: 53,
            scheduler: "rr",
            reals: [{ address: "10.244.3.4", port: 53 }],
          },
          {
            proto: "tcp",
            address: "172.18.0.30",
            port: 31080,
            scheduler: "rr",
            reals: [{ address: "10.244.3.9", port: 8080 }],
          },
        ],
        // kube-router sets these itself on every start (network_services_controller.go Run), so they are
        // no strictARP left by kube-proxy.
        sysctls: {
          "net.ipv4.vs.conntrack": "1",
          "net.ipv4.vs.expire_nodest_conn": "1",
          "net.ipv4.vs.expire_quiescent_template": "1",
          "net.ipv4.vs.conn_reuse_mode": "0",
          "net.ipv4.conf.all.arp_ignore": "1",
          "net.ipv4.conf.all.arp_announce": "2",
        },
        kubeProxy: null,
        nodeIps: ["172.18.0.30"],
      },
      expect: {
        phase: "none",
        phaseSource: "kernel-state",
        verdict: "clean",
        findings: ["kube-proxy-free", "other-service-proxy-ipvs"],
        evidence: { "other-service-proxy-ipvs": { proxy: "kube-router", virtualServers: 3 } },
      },
      why: "these virtual servers are kube-router's live Services, not kube-proxy's leftovers and not foreign VIPs: naming them 'left behind' would offer `ipvsadm --clear`, cutting every Service on the node; the strictARP sysctls are kube-router's own; the node is out of KEP-5495's reach but still IPVS, which the info finding says",
    },
  ],
};
