import t, { type Test } from "tap";
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VerifyResult } from "../../common/verify-result.js";
import { parseConfigz } from "../../agent/parse/kube-proxy-configz.js";
import type { NodeReport } from "../../agent/report/schema.js";
import { findingIds, parseScanOutput } from "../helpers/scan-report.js";
import {
  bootUml,
  DEFAULT_MODULES,
  hostScratchDir,
  REPO_ROOT,
  umlRunsHere,
  umlUnavailableReason,
} from "../helpers/uml.js";
import { kubeProxyConfig, realKubeProxy, standinKubeconfig } from "../helpers/real-kube-proxy.js";
import { realCluster } from "../helpers/real-cluster.js";

// The REAL kube-proxy in ipvs mode, and the switch away from it, run by kube-proxy's own binary in
// User-Mode Linux (real IPVS, a real kube-ipvs0, real ipsets, iptables-legacy; test/helpers/uml.ts).
// One boot (real-kube-proxy-ipvs-uml-guest.sh) and these steps in order, the agent scanning after each:
//   1. ipvs mode on a fresh node (ClusterIP dual-stack with ClientIP affinity, NodePort, LoadBalancer
//      with externalTrafficPolicy Local and healthCheckNodePort 32000, externalIPs);
//   2. the same binary restarted in nftables mode, then `verify`;
//   3. back to ipvs mode (the rollback), then `verify --expect-mode ipvs`;
//   4. iptables mode after ipvs;
//   5. v1.31.14 and v1.37.2 in ipvs mode with the same Services, each after kube-proxy's own
//      `--cleanup` (what it leaves checked) and a reset of the node by the guest script;
//   6. v1.37.2 with the KubeProxyIPVS gate off (refused) and set on (/configz).
// kube-proxy's readiness is its own signal (sync timestamps on /metrics, both families; before v1.33
// the IPv6 proxier's "syncProxyRules complete" log line), never a sleep.
//
// What the real binary did that the hand-built UML profiles (test/profiles/common.ts and the netfilter
// fixtures) did not assume, v1.34.4 (see also docs/testing.md):
// - nftables mode cannot run in UML: its kernel is built without NF_TABLES_IPV4/IPV6/INET
//   (/usr/share/doc/user-mode-linux/config.gz), so kube-proxy exits 1 with `add table ip kube-proxy`:
//   "Operation not supported". Its start still runs platformCleanup first
//   (cmd/kube-proxy/app/options.go Run): the switch's cleanup of ipvs state is real here, the
//   nftables tables are not.
// - That cleanup leaves every KUBE-6-* ipset: ipvs.CleanupLeftovers destroys the sets by their IPv4
//   names only (pkg/proxy/ipvs/proxier.go cleanupLeftovers, ipsetInfo), and the agent's kube-ipsets-left
//   says so. The profiles' "after the switch" nodes (nftablesClean) have no ipset left: a node the real
//   binary switched is `attention` until the KUBE-6-* sets are destroyed.
// - The IPv6 proxier only starts its first sync after the IPv4 one ends (the meta-proxier hands each
//   its *Synced calls in turn, and ipvs' OnEndpointSlicesSynced syncs inline); a scan between the two
//   sees IPv6 virtual servers not yet in KUBE-6-CLUSTER-IP nor on kube-ipvs0 and called them foreign.
// - The ipsets ipvs mode makes are 17 per family (the profiles' fixture has 8 IPv4 ones), IPv6 names
//   truncated to 31 characters (KUBE-6-LOAD-BALANCER-SOURCE-CID, KUBE-6-NODE-PORT-LOCAL-SCTP-HAS).
// - ipvs mode sets net.ipv4.ip_forward=1 and net.ipv4.vs.{conntrack,expire_nodest_conn,
//   expire_quiescent_template}=1 on start, and nothing resets them when it goes.
// - iptables mode after ipvs mode removes nothing of it (platformCleanup cleans only nftables for an
//   iptables-based mode): IPVS, kube-ipvs0, all 34 ipsets and ipvs mode's chains, KUBE-IPVS-FILTER's
//   INPUT jump included, stay beside iptables mode's own chains.
t.setTimeout(2_400_000);

const VERSION = "v1.34.4";

/**
 * The other releases, run in ipvs mode in the same boot after step 4, each on a node reset after
 * kube-proxy's own `--cleanup` (step 5). `series`: how the guest knows both IP families synced (the per-family
 * sync timestamps from v1.33; before, one series both set, so the IPv6 proxier's own log line).
 * `after`: the mode the node ran before its cleanup. `gate`: the release has the KubeProxyIPVS feature gate (v1.37: pkg/features/kube_features.go), run
 * off and on besides the default. `findings`/`severity`: what the agent says of that node.
 */
const MORE = [
  {
    version: "v1.31.14",
    after: "iptables",
    series: "log",
    gate: false,
    ipsetsPerFamily: 17,
    severity: "info",
    findings: [
      "health-check-nodeports-shrink",
      "ip-forward-not-persistent",
      "ipvs-mode-deprecated",
      "ipvs-session-affinity-per-virtual-server",
      "ipvs-timeouts-set",
      "nodeport-addresses-shrink",
    ],
  },
  {
    version: "v1.37.2",
    after: "ipvs",
    series: "2",
    gate: true,
    ipsetsPerFamily: 17,
    severity: "warning",
    findings: [
      "health-check-nodeports-shrink",
      "ip-forward-not-persistent",
      "ipvs-mode-deprecated",
      "ipvs-session-affinity-per-virtual-server",
      "ipvs-timeouts-set",
      "nodeport-addresses-shrink",
    ],
  },
] as const;

/** The cluster of the nftables test, and a Service with an externalIP. */
function ipvsCluster(): object {
  const c = realCluster(VERSION) as { services: object[]; endpointSlices: object[] };
  const meta = (name: string, extra: object = {}) => ({
    name,
    namespace: "default",
    uid: "00000000-0000-4000-8000-000000000e01",
    resourceVersion: "100",
    creationTimestamp: "2026-01-01T00:00:00Z",
    ...extra,
  });
  return {
    ...c,
    services: [
      ...c.services,
      {
        metadata: meta("ext"),
        spec: {
          type: "ClusterIP",
          clusterIP: "10.96.0.13",
          clusterIPs: ["10.96.0.13"],
          ipFamilies: ["IPv4"],
          ipFamilyPolicy: "SingleStack",
          externalIPs: ["192.0.2.60"],
          ports: [{ name: "http", protocol: "TCP", port: 80, targetPort: 8080 }],
          sessionAffinity: "None",
          internalTrafficPolicy: "Cluster",
        },
        status: { loadBalancer: {} },
      },
    ],
    endpointSlices: [
      ...c.endpointSlices,
      {
        metadata: meta("ext-ipv4", {
          uid: "00000000-0000-4000-8000-000000000e02",
          labels: {
            "kubernetes.io/service-name": "ext",
            "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
          },
        }),
        addressType: "IPv4",
        endpoints: [
          {
            addresses: ["10.244.0.8"],
            conditions: { ready: true, serving: true, terminating: false },
            nodeName: "proxyscope-node",
            targetRef: { kind: "Pod", namespace: "default", name: "ext-pod" },
          },
        ],
        ports: [{ name: "http", protocol: "TCP", port: 8080 }],
      },
    ],
  };
}

/** The virtual servers ipvs mode makes for that cluster on this node (ipvsadm's spelling). */
const EXPECTED_VS = [
  "TCP 10.96.0.10:80 persistent", // ClientIP affinity: persistent 10800
  "TCP [fd00:96::10]:80 persistent",
  "TCP 10.96.0.11:80",
  "TCP 10.88.0.10:30080", // NodePort: on the node's address only (nothing else is a local unicast address)
  "TCP 10.96.0.12:80",
  "TCP 10.88.0.10:30081",
  "TCP 192.0.2.50:80", // the LoadBalancer's ingress IP
  "TCP 10.96.0.13:80",
  "TCP 192.0.2.60:80", // the externalIP
].sort();
/** What kube-ipvs0 holds: every ClusterIP, the ingress IP and the externalIP (not the node's). */
const EXPECTED_KUBE_IPVS0 = [
  "10.96.0.10",
  "10.96.0.11",
  "10.96.0.12",
  "10.96.0.13",
  "192.0.2.50",
  "192.0.2.60",
  "fd00:96::10",
].sort();

/** `ipvsadm -Ln`'s virtual servers as "PROTO ADDR:PORT[ persistent]". */
function ipvsadmServers(text: string): string[] {
  return [...text.matchAll(/^(TCP|UDP|SCTP) {2}(\S+) +\S+(.*)$/gm)]
    .map((m) => `${m[1]} ${m[2]}${/persistent/.test(m[3] ?? "") ? " persistent" : ""}`)
    .sort();
}
/** The agent's virtual servers, spelled as ipvsadm does. */
function agentServers(r: NodeReport): string[] {
  return (r.facts.ipvs?.virtualServers ?? [])
    .map((v) => {
      const addr = v.family === "inet6" ? `[${v.address}]` : v.address;
      return `${v.protocol} ${addr}:${v.port}${v.flags.includes("persistent") ? " persistent" : ""}`;
    })
    .sort();
}
/** `ip addr show dev kube-ipvs0`'s addresses, or null when the step found no kube-ipvs0. */
function ipAddrs(text: string): string[] | null {
  if (text.trim() === "absent") return null;
  return [...text.matchAll(/^\s+inet6? ([^/\s]+)\//gm)].map((m) => m[1]!).sort();
}
const agentKubeIpvs0 = (r: NodeReport) =>
  r.facts.kubeIpvs0?.present ? r.facts.kubeIpvs0.addresses.map((a) => a.address).sort() : null;
const ipsetNames = (text: string) => text.split("\n").filter(Boolean).sort();
const agentIpsets = (r: NodeReport) => (r.facts.ipsets?.sets ?? []).map((s) => s.name).sort();
const kubeChains = (save: string) =>
  [...new Set([...save.matchAll(/^:(KUBE-\S+)/gm)].map((m) => m[1]!))].sort();

const skip = umlUnavailableReason();
const bin = realKubeProxy(VERSION);
const moreBins = MORE.map((m) => ({ ...m, bin: realKubeProxy(m.version) }));
const unbuilt = [VERSION, ...MORE.map((m) => m.version)].filter(
  (v) => (v === VERSION ? bin : moreBins.find((m) => m.version === v)?.bin) === null,
);
if (skip !== null) t.fail(`User-Mode Linux is needed for this test and does not skip silently: ${skip}`);
else if (unbuilt.length > 0)
  t.fail(
    `kube-proxy ${unbuilt.join(", ")} not built: run \`node test/kube-proxy/build.mjs ${unbuilt.join(" ")}\` (npm test does)`,
  );
else if (bin !== null && umlRunsHere(t)) {
  const scratch = hostScratchDir("proxyscope-kpipvs-");
  t.teardown(scratch.remove);
  const out = scratch.path;
  // The stand-in on a fixed port: the guest's loopback is its own.
  writeFileSync(
    join(out, "cluster.json"),
    JSON.stringify({ ...ipvsCluster(), token: null, listen: "127.0.0.1:6443" }),
  );
  writeFileSync(join(out, "kubeconfig"), JSON.stringify(standinKubeconfig(6443)));
  for (const mode of ["ipvs", "nftables", "iptables"] as const)
    writeFileSync(
      join(out, `config-${mode}.json`),
      JSON.stringify(kubeProxyConfig(mode, join(out, "kubeconfig"))),
    );
  for (const m of MORE)
    for (const [name, on] of [
      ["gate-off", false],
      ["gate-on", true],
    ] as const)
      if (m.gate)
        writeFileSync(
          join(out, `config-ipvs-${name}-${m.version}.json`),
          JSON.stringify(
            kubeProxyConfig("ipvs", join(out, "kubeconfig"), { featureGates: { KubeProxyIPVS: on } }),
          ),
        );

  const boot = await bootUml({
    script: readFileSync(join(REPO_ROOT, "test/kernel/real-kube-proxy-ipvs-uml-guest.sh"), "utf8"),
    env: {
      PROXYSCOPE_OUT: out,
      PROXYSCOPE_KP: bin,
      PROXYSCOPE_KP_SERIES: "2",
      PROXYSCOPE_KP_MORE: moreBins.map((m) => `${m.version}=${m.bin}=${m.series}`).join(" "),
    },
    // iptables mode's ClientIP affinity needs xt_recent, its localhost-NodePort counter xt_nfacct.
    modules: [...DEFAULT_MODULES, "xt_recent", "nfnetlink_acct", "xt_nfacct"],
    memMb: 1024,
    timeoutMs: 2_300_000,
  });
  const has = (name: string) => existsSync(join(out, name));
  const file = (name: string) => (has(name) ? readFileSync(join(out, name), "utf8") : `(no ${name})`);
  const scan = (step: string) => parseScanOutput(file(`${step}.scan.json`));
  const verify = (step: string) => VerifyResult.parse(JSON.parse(file(`${step}.verify.json`)));
  const line = (v: VerifyResult, id: string) => v.checks.find((c) => c.id === id);
  if (process.env.KEEP_KPIPVS) cpSync(out, process.env.KEEP_KPIPVS, { recursive: true });

  t.match(boot.output, /guest-done/, "the guest script ran to the end", { output: boot.output.slice(-3000) });
  t.same(boot.modulesFailed, [], "every module loaded");

  /** The agent reports the real binary's IPVS, kube-ipvs0 and ipsets, as the tools read them. */
  const sameKernelState = (t: Test, step: string, r: NodeReport) => {
    t.same(
      agentServers(r),
      ipvsadmServers(file(`${step}.ipvsadm`)),
      "IPVS virtual servers: the agent's = ipvsadm's",
    );
    t.same(agentKubeIpvs0(r), ipAddrs(file(`${step}.kube-ipvs0`)), "kube-ipvs0: the agent's = ip addr's");
    t.same(agentIpsets(r), ipsetNames(file(`${step}.ipsets`)), "ipsets: the agent's = ipset list -n");
  };

  t.test("1. ipvs mode: the agent reads what the real binary made", async (t) => {
    t.match(boot.output, /ipvs: kube-proxy ipvs synced/, "kube-proxy synced both families");
    t.same(ipvsadmServers(file("ipvs.ipvsadm")), EXPECTED_VS, "every Service kind has its virtual server");
    t.same(ipAddrs(file("ipvs.kube-ipvs0")), EXPECTED_KUBE_IPVS0, "kube-ipvs0 holds every Service IP");
    const sets = ipsetNames(file("ipvs.ipsets"));
    t.equal(sets.filter((s) => s.startsWith("KUBE-6-")).length, 17, "17 IPv6 sets");
    t.equal(sets.filter((s) => !s.startsWith("KUBE-6-")).length, 17, "17 IPv4 sets");
    t.equal(file("ipvs.scan.rc").trim(), "0", file("ipvs.scan.err"));
    const r = scan("ipvs");
    sameKernelState(t, "ipvs", r);
    t.equal(r.phase, "ipvs");
    t.equal(r.phaseSource, "proxyMode", "the mode is kube-proxy's own word");
    t.same(r.facts.proxyMode, { mode: "ipvs" });
    t.equal(r.facts.kubeProxyMetrics?.gitVersion, VERSION);
    // The profile's ipvsReady is `ready` with two infos; this node adds three warnings, each true of this
    // config: nodePortAddresses unset (NodePorts and the health check on every address, fd00:88::10
    // included, until nftables mode limits them to the primary one) and ip_forward set by kube-proxy at
    // start, by no sysctl.d file. The infos: the ClientIP Service's persistent virtual servers (affinity
    // per address in ipvs mode) and IPVS's 900 s idle timeout against conntrack's, both read here.
    t.same(findingIds(r), [
      "health-check-nodeports-shrink",
      "ip-forward-not-persistent",
      "ipvs-mode-deprecated",
      "ipvs-session-affinity-per-virtual-server",
      "ipvs-timeouts-set",
      "nodeport-addresses-shrink",
    ]);
    t.equal(r.verdict, "attention");
  });

  t.test("2. the switch: nftables mode's start cleans ipvs mode's state, then fails here", async (t) => {
    t.equal(file("nft.kp.rc").trim(), "1", "kube-proxy exits 1");
    t.match(file("nft.kp.log"), /add table ip kube-proxy/, "creating its ip table");
    t.match(file("nft.kp.log"), /Operation not supported/, "which UML's kernel (no NF_TABLES_IPV4) refuses");
    t.same(ipvsadmServers(file("nft.ipvsadm")), [], "IPVS flushed");
    t.equal(file("nft.kube-ipvs0").trim(), "absent", "kube-ipvs0 deleted");
    t.same(kubeChains(file("nft.iptables")), [], "no KUBE-* iptables chain left");
    t.same(kubeChains(file("nft.ip6tables")), [], "no KUBE-* ip6tables chain left");
    const sets = ipsetNames(file("nft.ipsets"));
    t.ok(
      sets.length === 17 && sets.every((s) => s.startsWith("KUBE-6-")),
      "only the 17 KUBE-6-* sets are left",
      { sets },
    );
    t.match(file("nft.sysctls"), /net\.ipv4\.vs\.conntrack = 1/, "ipvs mode's sysctls stay");
    const r = scan("nft");
    sameKernelState(t, "nft", r);
    // kube-proxy is gone: the agent says so and names what is left.
    t.equal(r.phaseSource, "kernel-state");
    t.equal(r.verdict, "unknown");
    t.same(findingIds(r), ["kube-ipsets-left", "kube-proxy-not-answering"]);
    const v = verify("nft");
    t.equal(file("nft.verify.rc").trim(), "1", "verify fails");
    t.equal(line(v, "ipvs-virtual-servers")?.status, "ok", "no IPVS virtual server");
    t.equal(line(v, "kube-ipvs0")?.status, "ok", "no kube-ipvs0");
    t.equal(line(v, "kube-proxy-iptables-chains")?.status, "ok", "no ipvs-mode iptables chain");
    t.equal(line(v, "kube-proxy-ipsets")?.status, "fail");
    t.match(line(v, "kube-proxy-ipsets")?.detail ?? "", /^17 left: KUBE-6-/);
    t.equal(line(v, "nftables-table")?.status, "fail", "no kube-proxy table: it could not make one");
    t.equal(line(v, "proxy-mode")?.status, "fail", "kube-proxy does not answer");
  });

  t.test("3. the rollback: ipvs mode again, and verify --expect-mode ipvs passes", async (t) => {
    t.match(boot.output, /back: kube-proxy ipvs synced/);
    t.same(ipvsadmServers(file("back.ipvsadm")), EXPECTED_VS);
    t.same(ipAddrs(file("back.kube-ipvs0")), EXPECTED_KUBE_IPVS0);
    const r = scan("back");
    sameKernelState(t, "back", r);
    t.equal(r.phase, "ipvs");
    t.equal(r.phaseSource, "proxyMode");
    t.same(findingIds(r), [
      "health-check-nodeports-shrink",
      "ip-forward-not-persistent",
      "ipvs-mode-deprecated",
      "ipvs-session-affinity-per-virtual-server",
      "ipvs-timeouts-set",
      "nodeport-addresses-shrink",
    ]);
    t.equal(r.verdict, "attention");
    const v = verify("back");
    t.equal(file("back.verify.rc").trim(), "0", file("back.verify.json"));
    t.equal(v.passed, true);
    t.equal(line(v, "proxy-mode")?.status, "ok");
    t.match(line(v, "ipvs-virtual-servers-present")?.detail ?? "", /^9 virtual servers, 9 with real servers/);
    t.match(
      line(v, "kube-ipvs0-service-ips")?.detail ?? "",
      /^7 of 7 Service IPs IPVS serves are on kube-ipvs0/,
    );
  });

  t.test(
    "4. ipvs -> iptables: iptables mode cleans none of ipvs mode, and the agent names each piece",
    async (t) => {
      t.match(boot.output, /ipt: kube-proxy iptables synced/);
      // platformCleanup for an iptables-based mode removes only nftables state (server_linux.go).
      t.same(ipvsadmServers(file("ipt.ipvsadm")), EXPECTED_VS, "every IPVS virtual server stays");
      t.same(ipAddrs(file("ipt.kube-ipvs0")), EXPECTED_KUBE_IPVS0, "kube-ipvs0 stays with every address");
      t.equal(ipsetNames(file("ipt.ipsets")).length, 34, "all 34 ipsets stay");
      const chains = kubeChains(file("ipt.iptables"));
      for (const c of [
        "KUBE-IPVS-FILTER",
        "KUBE-IPVS-OUT-FILTER",
        "KUBE-SOURCE-RANGES-FIREWALL",
        "KUBE-LOAD-BALANCER",
      ])
        t.ok(chains.includes(c), `ipvs mode's ${c} stays`);
      t.match(
        file("ipt.iptables"),
        /^-A INPUT .*-j KUBE-IPVS-FILTER$/m,
        "and INPUT still jumps to KUBE-IPVS-FILTER",
      );
      t.ok(
        chains.includes("KUBE-NODEPORTS") && chains.some((c) => c.startsWith("KUBE-SVC-")),
        "beside iptables mode's own",
      );
      const r = scan("ipt");
      sameKernelState(t, "ipt", r);
      t.equal(r.phase, "iptables");
      t.equal(r.phaseSource, "proxyMode");
      t.same(findingIds(r), [
        "ipvs-iptables-chains-left",
        "ipvs-virtual-servers-left",
        "kube-ipsets-left",
        "kube-ipvs0-left",
        "nodeport-addresses-shrink",
      ]);
      t.equal(r.verdict, "attention");
      const left = r.findings.find((f) => f.id === "ipvs-iptables-chains-left")?.evidence as {
        chains?: string[];
      };
      t.ok(
        left.chains?.some((c) => c.startsWith("ipv4 legacy filter/KUBE-IPVS-FILTER")) &&
          left.chains.some((c) => c.startsWith("ipv6 legacy filter/KUBE-IPVS-FILTER")),
        "both families' KUBE-IPVS-FILTER are named",
        { chains: left.chains },
      );
    },
  );

  for (const m of MORE) {
    const v = m.version;
    t.test(`5. ${v} in ipvs mode: the agent reads what that release made`, async (t) => {
      // kube-proxy v1.34.4's own --cleanup on the node as the previous step left it: it flushes IPVS,
      // deletes kube-ipvs0 and destroys the IPv4 sets, and leaves the 17 KUBE-6-* ones, as the switch does.
      t.same(ipvsadmServers(file(`clean-${v}-first.ipvsadm`)), [], "--cleanup: IPVS flushed");
      t.equal(file(`clean-${v}-first.kube-ipvs0`).trim(), "absent", "--cleanup: kube-ipvs0 deleted");
      const left = ipsetNames(file(`clean-${v}-first.ipsets`));
      t.ok(
        left.length === 17 && left.every((s) => s.startsWith("KUBE-6-")),
        "--cleanup: only the 17 KUBE-6-* sets are left",
        { left },
      );
      if (m.after === "iptables") {
        // After iptables mode over ipvs mode (step 4) it fails and leaves iptables mode's chains: its
        // iptables cleanup (one iptables-restore per table, all or nothing) fails, and its ipvs cleanup
        // cannot delete KUBE-MARK-MASQ ("Too many links": iptables mode's KUBE-SEP-* chains jump to it)
        // (pkg/proxy/iptables/proxier.go cleanupLeftoversForFamily, pkg/proxy/ipvs/proxier.go
        // cleanupIptablesLeftovers).
        t.equal(file(`clean-${v}-first.kp.rc`).trim(), "1", "kube-proxy --cleanup exits 1");
        t.match(file(`clean-${v}-first.kp.log`), /Failed to execute iptables-restore/);
        t.match(
          file(`clean-${v}-first.kp.log`),
          /error deleting chain "KUBE-MARK-MASQ": exit status 1: iptables: Too many links/,
        );
        t.ok(
          kubeChains(file(`clean-${v}-first.iptables`)).some((c) => c.startsWith("KUBE-SVC-")),
          "and leaves iptables mode's chains",
        );
      }
      t.same(ipvsadmServers(file(`clean-${v}.ipvsadm`)), [], "cleaned: no IPVS virtual server");
      t.equal(file(`clean-${v}.kube-ipvs0`).trim(), "absent", "cleaned: no kube-ipvs0");
      t.same(ipsetNames(file(`clean-${v}.ipsets`)), [], "cleaned: no ipset");
      t.same(kubeChains(file(`clean-${v}.iptables`)), [], "cleaned: no KUBE-* iptables chain");
      t.same(kubeChains(file(`clean-${v}.ip6tables`)), [], "cleaned: no KUBE-* ip6tables chain");

      t.match(
        boot.output,
        new RegExp(`ipvs-${v}: kube-proxy ipvs synced`),
        "kube-proxy synced both families",
      );
      t.same(
        ipvsadmServers(file(`ipvs-${v}.ipvsadm`)),
        EXPECTED_VS,
        "every Service kind has its virtual server",
      );
      t.same(ipAddrs(file(`ipvs-${v}.kube-ipvs0`)), EXPECTED_KUBE_IPVS0, "kube-ipvs0 holds every Service IP");
      const sets = ipsetNames(file(`ipvs-${v}.ipsets`));
      t.equal(sets.filter((s) => s.startsWith("KUBE-6-")).length, m.ipsetsPerFamily, "IPv6 sets");
      t.equal(sets.filter((s) => !s.startsWith("KUBE-6-")).length, m.ipsetsPerFamily, "IPv4 sets");
      t.equal(file(`ipvs-${v}.scan.rc`).trim(), "0", file(`ipvs-${v}.scan.err`));
      const r = scan(`ipvs-${v}`);
      sameKernelState(t, `ipvs-${v}`, r);
      t.equal(r.phase, "ipvs");
      t.equal(r.phaseSource, "proxyMode", "the mode is kube-proxy's own word");
      t.same(r.facts.proxyMode, { mode: "ipvs" });
      t.equal(r.facts.kubeProxyMetrics?.gitVersion, v);
      t.same(findingIds(r), m.findings);
      t.equal(r.verdict, "attention");
      const dep = r.findings.find((f) => f.id === "ipvs-mode-deprecated");
      t.equal(dep?.severity, m.severity, "the deprecation's stage for this release");
      t.same(dep?.evidence, { kubeProxyVersion: v, KubeProxyIPVS: null }, "the gate left at its default");
    });
  }

  for (const m of MORE.filter((m) => m.gate)) {
    const v = m.version;
    t.test(`6. ${v}: the KubeProxyIPVS gate, as the real binary honours it`, async (t) => {
      // Off: validation refuses ipvs mode before anything runs (pkg/proxy/apis/config/validation/
      // validation.go validateProxyModeLinux), so the node is left as it was (here: cleaned).
      t.equal(file(`gate-off-${v}.kp.rc`).trim(), "1", "kube-proxy exits 1");
      t.match(
        file(`gate-off-${v}.kp.log`),
        /failed validate: KubeProxyConfiguration\.Mode\.ProxyMode: Invalid value: \\"ipvs\\": must be iptables, nftables or blank/,
        "naming ipvs as no longer a valid mode",
      );
      t.same(ipvsadmServers(file(`gate-off-${v}.ipvsadm`)), [], "no IPVS virtual server made");
      t.equal(file(`gate-off-${v}.kube-ipvs0`).trim(), "absent", "no kube-ipvs0 made");
      t.same(ipsetNames(file(`gate-off-${v}.ipsets`)), [], "no ipset made");
      // Default (on): ipvs mode runs and says it is deprecated, once, at start (server_linux.go).
      t.match(
        file(`ipvs-${v}.kp.log`),
        /The ipvs proxier has been deprecated and will be disabled by default in Kubernetes 1\.40 and removed in Kubernetes 1\.43/,
        "the deprecation in kube-proxy's own log",
      );
      // Set on: /configz carries it, and the agent's parser reads it for ipvs-mode-deprecated's evidence.
      t.equal(file(`gate-on-${v}.configz.status`).trim(), "200");
      const c = parseConfigz(file(`gate-on-${v}.configz.json`));
      t.ok(c.ok, "the agent parses that /configz", { error: c.ok ? null : c.error });
      t.same(c.ok ? c.value.featureGates : null, { KubeProxyIPVS: true }, "featureGates as set");
      t.match(
        file(`gate-on-${v}.kp.log`),
        /setting deprecated feature gate\..*featureGate="KubeProxyIPVS" value=true/,
        "a deprecated gate",
      );
    });
  }

  // RECORD_KUBE_PROXY=1: the real binary's ipvs-mode (step 1 and 5) and iptables-mode (step 4) answers
  // next to the nftables ones (test/fixtures/kube-proxy/real/README.md).
  if (process.env.RECORD_KUBE_PROXY === "1") {
    const recorded = [
      { from: "record-ipvs", to: `${VERSION}-ipvs` },
      { from: "record-iptables", to: `${VERSION}-iptables` },
      ...MORE.map((m) => ({ from: `record-${m.version}-ipvs`, to: `${m.version}-ipvs` })),
    ];
    for (const { from, to } of recorded) {
      const dir = join(REPO_ROOT, "test/fixtures/kube-proxy/real", to);
      mkdirSync(dir, { recursive: true });
      const answers: Record<string, { status: number; contentType: string }> = {};
      for (const f of ["proxyMode.txt", "configz.json", "metrics.txt", "healthz.txt", "livez.txt"]) {
        cpSync(join(out, from, f), join(dir, f));
        const [status, ...ct] = file(`${from}/${f}.status`).trim().split(" ");
        answers[f] = { status: Number(status), contentType: ct.join(" ") };
      }
      writeFileSync(join(dir, "answers.json"), `${JSON.stringify(answers, null, 2)}\n`);
    }
  }
}
