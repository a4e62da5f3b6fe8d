import type { FlagSpec } from "../../common/cli.js";
import { MAX_TIMER_MS, MAX_TIMER_S } from "../../common/flag-bounds.js";
import { VERSION } from "../../common/version.js";
import { REPORT_FORMATS, SOURCES, VERIFY_FORMATS } from "./formats.js";

// Every flag of every collector command, with its help text: what the CLI parses, --help prints and
// docs/cli.md's tables are checked against.

export type CollectorCommand = "report" | "serve" | "lc-audit" | "verify" | "scan-node";

/** The image scan-node runs when --image is not given: the release workflow's, at this version. */
export const DEFAULT_SCAN_IMAGE = `ghcr.io/proxyscope/proxyscope:${VERSION}`;

const KUBE: FlagSpec[] = [
  {
    flags: "--kubeconfig <path>",
    field: "kubeconfig",
    help: "the kubeconfig to use (default, as kubectl: $KUBECONFIG, ~/.kube/config, then in-cluster)",
  },
  {
    flags: "--context <name>",
    field: "context",
    help: "the kubeconfig context to use (default: its current-context)",
  },
  {
    flags: "--timeout-ms <n>",
    field: "timeoutMs",
    help: `deadline of each API and agent call, 1 to ${MAX_TIMER_MS} ms (default 5000)`,
  },
];
const AGENTS: FlagSpec[] = [
  {
    flags: "-n, --namespace <ns>",
    field: "agentNamespace",
    help: "the namespace proxyscope's agents run in (default proxyscope)",
  },
  { flags: "--agent-namespace <ns>", field: "agentNamespace", help: "the same as --namespace" },
  {
    flags: "--agent-selector <selector>",
    field: "agentSelector",
    help: "the agent pods' labels (default app.kubernetes.io/name=proxyscope-agent)",
  },
  { flags: "--agent-port <n>", field: "agentPort", help: "the agents' port, 1 to 65535 (default 9977)" },
  {
    flags: "--agent-access <how>",
    field: "agentAccess",
    help: "auto|direct|proxy: dial the pod IPs, or go through the API server's pods/proxy (default auto: direct in a pod, proxy from a laptop)",
  },
  {
    flags: "--concurrency <n>",
    field: "concurrency",
    help: "agent calls in flight, 1 to 1024 (default 64 straight to the agents, 32 through the API server's pod proxy, where each call is an API request)",
  },
];
const STATIC: FlagSpec = {
  flags: "--agents <url>",
  field: "agents",
  help: "agent base URLs, URL or NODE=URL (repeatable; with --source static, a list after one --agents)",
  multiple: true,
};
const GATHER: FlagSpec[] = [
  {
    flags: "--source <source>",
    field: "source",
    help: `${SOURCES.join("|")}: where node reports come from (default agents)`,
  },
  {
    flags: "--kube-proxy-namespace <ns>",
    field: "kubeProxyNamespace",
    help: "where kube-proxy's ConfigMap and DaemonSet live (default kube-system)",
  },
  STATIC,
  {
    flags: "--agents-file <path>",
    field: "agentsFile",
    help: `static: one "URL" or "NODE URL" a line (a regular file, at most 4 MiB)`,
  },
  {
    flags: "--prometheus-url <url>",
    field: "prometheusUrl",
    help: "prometheus: the HTTP API base (Prometheus, Thanos, Mimir)",
  },
  {
    flags: "--prometheus-node-label <name>",
    field: "prometheusNodeLabel",
    help: "prometheus: the target label holding the node name (default node)",
  },
  {
    flags: "--target-version <version>",
    field: "targetVersion",
    help: "also say what breaks when the cluster reaches that release, e.g. 1.40 (KEP-5495: 1.37 gated, 1.40 off by default, 1.43 removed)",
  },
];
const OUTPUT = (formats: readonly string[], dflt: string): FlagSpec => ({
  flags: "-o, --output <format>",
  field: "output",
  help: `${formats.join("|")} (default ${dflt})`,
});
const REPORT: FlagSpec[] = [
  OUTPUT(REPORT_FORMATS, "table"),
  {
    flags: "--fail-on <when>",
    field: "failOn",
    help: "info|warning|error|critical: a finding at or above it; ready|blocked|attention|clean|leftovers|unhealthy|unknown: a node with it; unanswered: a node without a usable report, or a cluster read the API would not give",
  },
  { flags: "--color <when>", field: "color", help: "auto|always|never (default auto; NO_COLOR is honoured)" },
  {
    flags: "--from-files <path>",
    field: "fromFiles",
    help: "read saved `proxyscope-agent scan -o json` node reports (files, or directories of *.json) instead of asking agents; the API only with --kubeconfig (docs/first-answers.md)",
    multiple: true,
  },
  {
    flags: "--accept-file <file>",
    field: "acceptFile",
    help: "accepted findings (YAML or JSON: accept: [{finding, node?, service?, reason, expires?}]): shown as accepted, not counted for --fail-on; expired or unmatched entries are reported (docs/first-answers.md)",
  },
  {
    flags: "--demo",
    field: "demo",
    help: "the report of a small sample fleet shipped with proxyscope (no cluster needed), to see what a report says",
  },
  {
    flags: "--changes",
    field: "changes",
    help: "print what the switch to nftables mode changes for each Service, and on which nodes (docs/ipvs-to-nftables.md), instead of the fleet report",
  },
];
const SERVE: FlagSpec[] = [
  { flags: "--listen <host>", field: "listen", help: "address to listen on (default 0.0.0.0)" },
  { flags: "--port <n>", field: "port", help: "port to listen on, 0 to 65535 (default 9978)" },
  {
    flags: "--interval-s <n>",
    field: "intervalS",
    help: `seconds between gathers (default 300, at most ${MAX_TIMER_S})`,
  },
  {
    flags: "--detail-from <who>",
    field: "detailFrom",
    help: "loopback|any: who may read the fleet report (/report, /), every node's findings with their evidence, without authentication (default loopback: kubectl port-forward arrives there)",
  },
  {
    flags: "--web.config.file <file>",
    field: "webConfigFile",
    help: "TLS and basic auth, in the Prometheus exporter-toolkit format (the agent's --web.config.file): every route but /healthz then needs them",
  },
];

/** Which flags each command takes. */
export const COLLECTOR_FLAGS: Record<CollectorCommand, readonly FlagSpec[]> = {
  report: [...REPORT, ...GATHER, ...KUBE, ...AGENTS],
  serve: [...SERVE, ...GATHER, ...KUBE, ...AGENTS],
  "lc-audit": [
    {
      flags: "--service <ns/name>",
      field: "service",
      help: "the Service whose IPVS connection counts to compare",
    },
    {
      flags: "--service-port <name|number>",
      field: "servicePort",
      help: "which of its ports (default: the first)",
    },
    ...KUBE,
    ...AGENTS,
  ],
  verify: [
    { flags: "--node <name>", field: "node", help: "the node whose acceptance check to run" },
    OUTPUT(VERIFY_FORMATS, "text"),
    STATIC,
    ...KUBE,
    ...AGENTS,
  ],
  "scan-node": [
    OUTPUT(VERIFY_FORMATS, "text"),
    {
      flags: "-n, --namespace <ns>",
      field: "agentNamespace",
      help: "scan-node: the namespace its pod runs in; Pod Security must allow a privileged pod there (default default)",
    },
    {
      flags: "--image <ref>",
      field: "image",
      help: `scan-node: the agent's image for its pod (default ${DEFAULT_SCAN_IMAGE})`,
    },
    {
      flags: "--wait-s <n>",
      field: "waitS",
      help: `scan-node: how long its pod may take to end, image pull included (default 300, at most ${MAX_TIMER_S})`,
    },
    ...KUBE,
  ],
};
// Every command's flags once (one -o for all): what loadConfig without a command parses.
export const ALL_FLAGS = [
  ...new Map(
    Object.values(COLLECTOR_FLAGS)
      .flat()
      .map((s) => [s.flags, s]),
  ).values(),
];
export const OUTPUTS: Partial<Record<CollectorCommand, readonly string[]>> = {
  report: REPORT_FORMATS,
  serve: REPORT_FORMATS,
  verify: VERIFY_FORMATS,
  "scan-node": VERIFY_FORMATS,
};
