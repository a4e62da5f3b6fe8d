import type { Phase, Verdict } from "../../agent/report/schema.js";
import type { Scenario } from "../standins/kube-proxy.js";

// A real-world profile is data: one file per distribution × network plugin under corpus/, each
// citing where its facts come from. test/kernel/profiles-netns.test.ts and profiles-uml.test.ts build
// every node it describes on a real kernel, start the kube-proxy stand-in with its endpoints, scan it
// with the built agent and assert the verdict written here. Adding a profile is adding one file.

/** A network link the node has. */
export interface Link {
  name: string;
  /**
   * What it is on the real node. The host kernel (netns) has no dummy driver: a dummy link there is one
   * end of a veth pair (the other end, `<name>-p`, holds nothing), which is why kube-ipvs0 and
   * kube-dummy-if, whose kind the agent reads, are built only in UML. In UML a "nic" is a dummy link (as
   * scenarios-uml.test.ts does); in netns a veth.
   */
  kind: "nic" | "dummy" | "bridge" | "vxlan" | "veth";
  /** "a.b.c.d/len" or an IPv6 "x::y/len". */
  addresses?: string[];
  /** For kind "veth": the peer's name (default `<name>-p`). Cilium's cilium_host/cilium_net are a pair. */
  peer?: string;
  /** Brought up (default true). */
  up?: boolean;
}

export interface RealServer {
  address: string;
  port: number;
  /** ipvsadm's forwarding method: masq (-m, kube-proxy's and kube-router's), route (-g), tunnel (-i). */
  method?: "masq" | "route" | "tunnel";
}

export interface VirtualServer {
  proto: "tcp" | "udp";
  address: string;
  port: number;
  scheduler?: string;
  /** ipvsadm -p: persistence timeout in seconds (kube-proxy's ClientIP session affinity). */
  persistent?: number;
  reals: RealServer[];
}

/**
 * What the REAL kube-proxy was run with to record a node's own state (test/profiles/record-kube-proxy.ts,
 * fixtures in test/fixtures/kube-proxy/profiles/<recordingKey>/): the inputs, so a change to any of them
 * names a recording that is not there yet.
 */
export interface RecordingSpec {
  mode: "ipvs" | "nftables" | "iptables";
  /** The real release run (built by test/kube-proxy/build.mjs): the one nearest the profile's. */
  version: string;
  /** The Node object's addresses; the first is eth0's. */
  nodeIps: string[];
  /** The node's links while kube-proxy ran (kube-ipvs0 excluded: kube-proxy makes it). */
  links: Link[];
  /** KubeProxyConfiguration v1alpha1 fields the profile sets (ipvs, nodePortAddresses). */
  config: Record<string, unknown>;
  /** svc1's NodePort (the profile's range may move it). */
  nodePort: number;
  /** A Service with an externalIP, when the profile has one. */
  externalIP?: { address: string; clusterIP: string; endpoint: string };
  /**
   * ipvs only: then the same binary restarted in this mode on the same node, as an operator switches,
   * and what is on the node after (`*.after.*` files). nftables mode cannot run in UML (no ip-family
   * nftables) but its start cleans ipvs mode's state first (platformCleanup): the after files are
   * that cleanup's leftovers.
   */
  then?: "nftables" | "iptables";
}

/** The kernel state of one node and who answers on kube-proxy's ports. */
export interface NodeState {
  /** netns: a network namespace on the host kernel (nftables, iptables-nft, ipset); uml: User-Mode
   *  Linux 6.1 (IPVS, dummy links; iptables-legacy; no ip-family nftables). */
  kernel: "netns" | "uml";
  links?: Link[];
  /** Files under test/fixtures/netfilter/sources, loaded in this order; `real:<key>/<file>` is one of
   *  kube-proxy's own, recorded from the real binary (test/profiles/recorded.ts). */
  ipsets?: string[];
  /** `ipset restore` lines added after the files (a profile's own members, e.g. its NodePorts). */
  ipsetLines?: string[];
  iptables?: string[];
  ip6tables?: string[];
  /** nftables rulesets (netns only: UML's nftables has no ip family). */
  nft?: string[];
  ipvs?: VirtualServer[];
  sysctls?: Record<string, string>;
  /** What the kube-proxy stand-in answers, in that distribution's version and format; null: nothing
   *  listens on kube-proxy's ports (no kube-proxy on the node, or it is gone). */
  kubeProxy: Scenario | null;
  /** The Node object's addresses (--node-ip). */
  nodeIps?: string[];
  /** The API server's --service-node-port-range, when not the default. */
  nodePortRange?: string;
  /** The real kube-proxy runs this node's kube-proxy state was recorded from (its `real:` files). */
  recordings?: RecordingSpec[];
}

export interface Expected {
  phase: Phase;
  verdict: Verdict;
  /** The exact finding ids, sorted. */
  findings: string[];
  phaseSource: "proxyMode" | "kernel-state" | "none";
  /** Evidence a finding must carry, by finding id then key (compared with t.same). */
  evidence?: Record<string, Record<string, unknown>>;
  /**
   * Set while main does not give this verdict yet: which fix it waits for. The expectation
   * stays what a careful SRE expects; the test still asserts it (and fails until the fix lands).
   */
  waitsFor?: string;
}

export interface ProfileNode {
  /** Unique within the corpus: [a-z0-9-], at most 20 characters (it names a network namespace). */
  name: string;
  /** Where in the migration this node is, in a sentence. */
  when: string;
  state: NodeState;
  expect: Expected;
  /** Why this verdict, in the SRE's terms (what must fire, what must not). */
  why: string;
}

export interface Profile {
  id: string;
  distribution: string;
  plugins: string[];
  title: string;
  /** Where each fact of this profile was read: upstream source, docs, issue threads, test/profiles/*.md. */
  sources: string[];
  nodes: ProfileNode[];
}
