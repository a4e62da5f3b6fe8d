import type { AddressesFacts } from "../../agent/facts/host.js";
import { judge as judgeFacts } from "../../agent/rules/index.js";
import { FINDINGS } from "../../agent/rules/catalogue.js";
import { configz, emptyFacts, iptablesBackend, metrics, noKernelState, vs } from "./facts.js";

/**
 * The rules over these facts, as the agent runs them, with one more check: every finding is one its
 * rule declares (id, severity, stage), so the derived id lists can be trusted.
 */
export function judge(...args: Parameters<typeof judgeFacts>): ReturnType<typeof judgeFacts> {
  const j = judgeFacts(...args);
  for (const f of j.findings) {
    const spec = FINDINGS.get(f.id);
    if (spec === undefined) throw new Error(`finding ${f.id} is declared by no rule`);
    const severities: readonly string[] = [spec.severity].flat();
    const stages: readonly string[] = [spec.stage].flat();
    if (!severities.includes(f.severity) || !stages.includes(f.stage))
      throw new Error(
        `finding ${f.id} is ${f.severity}/${f.stage}, its rule declares ${severities}/${stages}`,
      );
  }
  return j;
}

export const NOW = 1_800_000_000;
export const ids = (j: ReturnType<typeof judge>) => j.findings.map((f) => f.id).sort();

export const kernel = (release: string) => {
  const [maj, min] = release.split(".").map(Number);
  return { release, major: maj!, minor: min!, patch: 0 };
};

export const addresses = (primary: string, secondary: string[] = []): AddressesFacts => ({
  interfaces: [
    {
      name: "lo",
      kind: null,
      operState: "UNKNOWN",
      addresses: [{ family: "inet" as const, address: "127.0.0.1", prefixLen: 8, scope: "host" }],
    },
    {
      name: "eth0",
      kind: null,
      operState: "UP",
      addresses: [primary, ...secondary].map((a) => ({
        family: "inet" as const,
        address: a,
        prefixLen: 24,
        scope: "global",
      })),
    },
  ],
  primary: { ipv4: primary, ipv6: null, source: "config" as const },
});

export const ipvsNode = (over = {}) =>
  emptyFacts({
    ...noKernelState,
    kernel: kernel("6.8.0-51-generic"),
    proxyMode: { mode: "ipvs" },
    configz: configz(),
    kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 10 }, "v1.33.1"),
    addresses: addresses("192.168.4.11"),
    ipvs: {
      available: true,
      virtualServerCount: 2,
      realServerCount: 3,
      schedulers: { rr: 2 },
      virtualServers: [vs("10.96.0.1", 443), vs("10.96.0.10", 53, { protocol: "UDP" })],
      timeouts: { tcp: 900, tcpFin: 120, udp: 300 },
    },
    kubeIpvs0: {
      present: true,
      kind: "dummy",
      operState: "DOWN",
      flags: ["BROADCAST", "NOARP"],
      addresses: ["10.96.0.1", "10.96.0.10"].map((address) => ({
        family: "inet" as const,
        address,
        prefixLen: 32,
      })),
    },
    ...over,
  });

/** The same node after the switch: kube-proxy answers nftables and its ipvs state is gone. */
export const nftNode = (over = {}) =>
  ipvsNode({
    proxyMode: { mode: "nftables" },
    configz: configz({ mode: "nftables" }),
    ipvs: noKernelState.ipvs,
    kubeIpvs0: noKernelState.kubeIpvs0,
    ...over,
  });

/** kube-router's dummy link holding these Service IPs (kube-router linux_networking.go ipAddrAdd: scope link). */
export const kubeDummyIf = (...ips: string[]) => ({
  name: "kube-dummy-if",
  kind: "dummy",
  operState: "UNKNOWN",
  addresses: ips.map((address) => ({ family: "inet" as const, address, prefixLen: 32, scope: "link" })),
});

/**
 * kube-router as the service proxy, kube-proxy not deployed (test/profiles/corpus/kube-router-proxy.ts):
 * its Service IPs on kube-dummy-if, its NodePort on the node's address, its kube-router-svip* sets and
 * KUBE-ROUTER-SERVICES chain, no kube-ipvs0, nothing on kube-proxy's ports.
 */
export const kubeRouterNode = (over = {}) => {
  const base = addresses("172.18.0.30");
  return emptyFacts({
    ...noKernelState,
    kernel: kernel("6.1.0-27-amd64"),
    addresses: {
      ...base,
      interfaces: [...base.interfaces, kubeDummyIf("10.96.0.1", "10.96.0.10")],
    },
    ipvs: {
      available: true,
      virtualServerCount: 3,
      realServerCount: 3,
      schedulers: { rr: 3 },
      virtualServers: [
        vs("10.96.0.1", 443),
        vs("10.96.0.10", 53, { protocol: "UDP" }),
        vs("172.18.0.30", 31080),
      ],
      timeouts: null,
    },
    ipsets: {
      available: true,
      sets: [
        ["kube-router-local-ips", "hash:ip", 2],
        ["kube-router-svip", "hash:ip", 3],
        ["kube-router-svip-prt", "hash:ip,port", 3],
      ].map(([name, type, entries]) => ({
        name: name as string,
        type: type as string,
        family: "inet" as const,
        entries: entries as number,
        references: 1,
        kubeProxy: false,
      })),
      nodePorts: [],
    },
    iptables: {
      backends: [
        iptablesBackend({
          backend: "legacy",
          kubeChains: [{ table: "filter", name: "KUBE-ROUTER-SERVICES", rules: 5, owner: "unknown" }],
        }),
      ],
    },
    sysctls: {
      values: [
        { name: "net.ipv4.conf.all.arp_ignore", value: "1" },
        { name: "net.ipv4.conf.all.arp_announce", value: "2" },
      ],
    },
    ...over,
  });
};
