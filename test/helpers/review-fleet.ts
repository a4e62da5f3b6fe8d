import { readFileSync } from "node:fs";
import { buildReport } from "../../agent/assemble/report.js";
import { parseOsRelease } from "../../agent/parse/os-release.js";
import { FACT_SOURCES, type ProbeRun } from "../../agent/facts/sources.js";
import type { NodeFacts } from "../../agent/report/schema.js";
import { observationFromReport } from "../../collector/gather/observe.js";
import type { ApiNode } from "../../collector/report/cluster-facts.js";
import type { FleetReport } from "../../collector/report/schema.js";
import { rollup } from "../../collector/plan/rollup.js";
import { configz, metrics, noKernelState } from "./facts.js";
import { cfg, facts as clusterFacts } from "./fleet.js";
import { addresses, ipvsNode, kernel, nftNode } from "./rules.js";

// A fleet as a migration review sees one, part-way through: an EKS cluster at 1.37 with four managed
// node groups (eks.amazonaws.com/nodegroup), EC2-style names. Every node's findings come from the agent's
// own rules over facts in the probes' shapes (buildReport), and the fleet from the collector's rollup:
// the renderer gets what it would get from real agents. Not the hostile-name fixture (collector-html).

const SCANNED = new Date("2026-11-30T09:15:00Z");
const NOW_S = SCANNED.getTime() / 1000;

// The hosts' os-release as recorded (test/fixtures/os-release/), as the agent's probe reads it.
function osRelease(fixture: string): NodeFacts["osRelease"] {
  const text = readFileSync(
    new URL(`../fixtures/os-release/${fixture}/etc/os-release`, import.meta.url),
    "utf8",
  );
  const r = parseOsRelease(text);
  if (!r.ok) throw new Error(r.error);
  return { source: "/etc/os-release", ...r.value };
}
const AL2023 = {
  os: "Amazon Linux 2023.6.20241212",
  kernel: "6.1.119-129.201.amzn2023.x86_64",
  rel: "amazon-linux-2023",
};
const AL2 = { os: "Amazon Linux 2", kernel: "5.10.230-223.885.amzn2.x86_64", rel: "amazon-linux-2" };
const BOTTLEROCKET = { os: "Bottlerocket OS 1.29.0 (aws-k8s-1.37)", kernel: "6.1.119", rel: "bottlerocket" };

const fresh = (version: string) =>
  metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW_S - 12 }, version);

const nftTables: Partial<NodeFacts> = {
  nftables: {
    tables: [
      { family: "ip", name: "kube-proxy", owner: "kube-proxy" },
      { family: "ip6", name: "kube-proxy", owner: "kube-proxy" },
    ],
    kubeProxyTableName: "kube-proxy",
    kubeProxy: (["ip", "ip6"] as const).map((family) => ({
      family,
      name: "kube-proxy",
      sets: [
        {
          name: "service-ips",
          kind: "map" as const,
          type: "ipv4_addr . inet_proto . inet_service : verdict",
          elements: family === "ip" ? 212 : 0,
        },
      ],
      chains: {
        total: family === "ip" ? 640 : 12,
        service: family === "ip" ? 212 : 0,
        endpoint: family === "ip" ? 410 : 0,
        external: 4,
        base: ["filter-input", "nat-prerouting"],
      },
      nodePorts: [],
    })),
    firewalls: [],
  },
};

function clean(version = "v1.37.2-eks-3fa1c2d"): NodeFacts {
  return nftNode({
    kernel: kernel(AL2023.kernel),
    kubeProxyMetrics: fresh(version),
    configz: configz({ mode: "nftables" }),
    ...nftTables,
  });
}
function onIpvs(k: string, ip: string, version = "v1.37.2-eks-3fa1c2d"): NodeFacts {
  return ipvsNode({ kernel: kernel(k), kubeProxyMetrics: fresh(version), addresses: addresses(ip) });
}
function leftovers(): NodeFacts {
  return {
    ...clean(),
    ipsets: {
      sets: ["KUBE-CLUSTER-IP", "KUBE-NODE-PORT-TCP", "KUBE-LOOP-BACK", "KUBE-6-CLUSTER-IP"].map((name) => ({
        name,
        type: name.includes("NODE-PORT") ? "bitmap:port" : "hash:ip,port",
        family: name.includes("-6-")
          ? ("inet6" as const)
          : name.includes("NODE-PORT")
            ? null
            : ("inet" as const),
        entries: 0,
        references: 0,
        kubeProxy: true,
      })),
    },
    sysctls: {
      values: [
        { name: "net.ipv4.conf.all.arp_ignore", value: "1" },
        { name: "net.ipv4.conf.all.arp_announce", value: "2" },
      ],
    },
  };
}
function blackHole(): NodeFacts {
  return {
    ...clean(),
    kubeIpvs0: {
      present: true,
      kind: "dummy",
      operState: "DOWN",
      flags: ["BROADCAST", "NOARP"],
      addresses: ["172.20.0.1", "172.20.0.10", "172.20.118.42"].map((address) => ({
        family: "inet" as const,
        address,
        prefixLen: 32,
      })),
    },
    ipvs: noKernelState.ipvs!,
  };
}

export function report(node: string, f: NodeFacts) {
  const runs: ProbeRun[] = FACT_SOURCES.flatMap((s) => {
    const v = f[s.key];
    return v === null || v === undefined
      ? []
      : [{ name: s.probe, outcome: { ok: true as const, facts: v as never }, durationMs: 3 }];
  });
  return buildReport(runs, { node, agentVersion: "0.1.0", startedAt: SCANNED, finishedAt: SCANNED });
}

export interface Spec {
  name: string;
  group: string;
  host: typeof AL2023;
  facts: NodeFacts | null;
}

const ec2 = (ip: string) => `ip-${ip.replace(/\./g, "-")}.eu-west-1.compute.internal`;

export function specs(): Spec[] {
  const out: Spec[] = [];
  const add = (
    group: string,
    host: typeof AL2023,
    ips: string[],
    f: (ip: string, i: number) => NodeFacts | null,
  ) =>
    ips.forEach((ip, i) => {
      const facts = f(ip, i);
      out.push({ name: ec2(ip), group, host, facts: facts && { ...facts, osRelease: osRelease(host.rel) } });
    });
  // Migrated first: the canary pool, one node with ipsets and strictARP left, one black hole.
  add("system-al2023", AL2023, ["10.20.1.17", "10.20.1.54", "10.20.2.9"], (_ip, i) =>
    i === 1 ? leftovers() : clean(),
  );
  add(
    "web-al2023",
    AL2023,
    ["10.20.3.21", "10.20.3.88", "10.20.4.12", "10.20.4.77", "10.20.5.30"],
    (ip, i) => (i < 2 ? clean() : i === 2 ? blackHole() : onIpvs(AL2023.kernel, ip)),
  );
  // Bottlerocket, still on ipvs: ready to move.
  add("batch-bottlerocket", BOTTLEROCKET, ["10.20.8.40", "10.20.8.141", "10.20.9.6"], (ip, i) =>
    i === 2 ? null : onIpvs(BOTTLEROCKET.kernel, ip),
  );
  // Amazon Linux 2 on 5.10: nftables mode cannot start there; a new image first.
  add("legacy-al2", AL2, ["10.20.12.8", "10.20.12.73"], (ip) => onIpvs(AL2.kernel, ip));
  return out;
}

function apiNode(s: Spec): ApiNode {
  return {
    name: s.name,
    kubeletVersion: "v1.37.2-eks-3fa1c2d",
    kernelVersion: s.host.kernel,
    osImage: s.host.os,
    addresses: [{ type: "InternalIP", address: s.name.slice(3, s.name.indexOf(".")).replace(/-/g, ".") }],
    labels: {
      "eks.amazonaws.com/nodegroup": s.group,
      "node.kubernetes.io/instance-type": s.group.startsWith("batch") ? "c6i.2xlarge" : "m6i.xlarge",
      "topology.kubernetes.io/zone": "eu-west-1a",
    },
    ready: true,
    unschedulable: false,
    providerID: null,
  };
}

/** The fleet's report, and (with history) a Prometheus-style burn-down of its last eight weeks. */
export function reviewFleet(opts: { history?: boolean } = {}): FleetReport {
  const all = specs();
  const observations = all.flatMap((s) =>
    s.facts ? [observationFromReport(report(s.name, s.facts), null)] : [],
  );
  const cluster = clusterFacts(
    { version: { gitVersion: "v1.37.2-eks-3fa1c2d", major: 1, minor: 37 }, nodes: all.map(apiNode) },
    cfg({
      mode: "ipvs",
      ipvs: { scheduler: "rr", strictARP: true, keys: ["scheduler", "strictARP"] },
    }),
  );
  const r = rollup({
    source: opts.history ? "prometheus" : "agents",
    collectorVersion: "0.1.0",
    generatedAt: SCANNED,
    cluster,
    observations,
    missingOutcome: opts.history ? "no-data" : "no-agent",
  });
  if (!opts.history) return r;
  // Eight weekly samples ending with today's counts: every node on ipvs eight weeks ago, moving pool by
  // pool since (what `--source prometheus` reads from the fleet's phase series).
  const total = all.length;
  const now = Object.fromEntries(
    Object.entries(r.summary.byPhase).filter(([k, v]) => k !== "no-report" && v > 0),
  );
  const history = [0, 0, 1, 2, 3, 4, 5].map((off, w) => ({
    at: new Date(SCANNED.getTime() - (7 - w) * 7 * 86400_000).toISOString(),
    byPhase: { ipvs: total - off, nftables: off },
  }));
  return { ...r, history: [...history, { at: SCANNED.toISOString(), byPhase: now }] };
}
