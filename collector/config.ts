import { z } from "zod";
import {
  checked,
  ConfigError,
  parseFlagsOnly,
  readFlags,
  type Command,
  type FlagSpec,
} from "../common/cli.js";
import {
  baseUrl,
  count,
  durationMs,
  durationS,
  listenHost,
  MAX_TIMER_MS,
  MAX_TIMER_S,
  nodeName,
  port,
} from "../common/flag-bounds.js";
import { targetsFromFlags } from "./sources/static.js";
import { parseTargetVersion } from "./checks/target-version.js";
import { FAIL_ON_VALUES } from "./report/fail-on.js";
import { VERSION } from "../common/version.js";

export { MAX_TIMER_MS, MAX_TIMER_S };

// One schema for every flag: a bad setting is named in one line before anything runs.
/** How the collector reaches an agent: its pod IP, or the API server's pod proxy (from a laptop). */
export const AGENT_ACCESS = ["auto", "direct", "proxy"] as const;

/** THE lists of -o formats: the help text, the schema, the check per command and docs/cli.md derive from them. */
export const REPORT_FORMATS = ["table", "json", "yaml", "markdown", "html", "csv", "junit"] as const;
export const VERIFY_FORMATS = ["text", "json", "yaml"] as const;
const FORMATS = [...new Set([...REPORT_FORMATS, ...VERIFY_FORMATS])] as [
  (typeof REPORT_FORMATS)[number] | (typeof VERIFY_FORMATS)[number],
  ...((typeof REPORT_FORMATS)[number] | (typeof VERIFY_FORMATS)[number])[],
];

export const CollectorConfig = z.object({
  source: z.enum(["agents", "prometheus", "static"]),
  kubeconfig: z.string().min(1).nullable(),
  context: z.string().min(1).nullable(),
  kubeProxyNamespace: z.string().min(1),
  agentNamespace: z.string().min(1),
  agentSelector: z.string().min(1),
  agentPort: port(1),
  agentAccess: z.enum(AGENT_ACCESS),
  // Checked here, not when the gather starts: a bad value is a usage error (exit 2), not "no report".
  agents: z.array(z.string()).superRefine((urls, ctx) => {
    const bad = targetsFromFlags(urls).errors[0];
    if (bad !== undefined) ctx.addIssue({ code: "custom", message: bad });
  }),
  agentsFile: z.string().min(1).nullable(),
  /** report --from-files: saved node reports (files or directories) instead of a gather. */
  fromFiles: z.array(z.string().min(1, "must not be empty")),
  /** report --demo: the sample fleet shipped with proxyscope. */
  demo: z.boolean(),
  /** report --accept-file: findings accepted, with a reason (report/accept.ts). */
  acceptFile: z.string().min(1).nullable(),
  prometheusUrl: baseUrl.nullable(),
  prometheusNodeLabel: z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_]*$/, "must be a Prometheus label name"),
  output: z.enum(FORMATS),
  failOn: z.enum(FAIL_ON_VALUES).nullable(),
  /** report --changes: what the switch changes for each Service instead of the fleet report. */
  changes: z.boolean(),
  concurrency: count(1, 1024).nullable(),
  // Bounded: above MAX_TIMER_MS a Node timer fires after 1 ms.
  timeoutMs: durationMs(),
  color: z.enum(["auto", "always", "never"]),
  listen: listenHost,
  port: port(0),
  intervalS: durationS(),
  detailFrom: z.enum(["loopback", "any"]),
  webConfigFile: z.string().min(1).nullable(),
  service: z
    .string()
    .regex(/^[a-z0-9-]+\/[a-z0-9.-]+$/, "must be NAMESPACE/NAME")
    .nullable(),
  servicePort: z.string().nullable(),
  node: nodeName.nullable(),
  /** scan-node: the agent's image its pod runs. */
  image: z
    .string()
    .min(1)
    .max(512)
    .regex(/^[^\s\p{Cc}]+$/u, "must be an image reference without spaces or control characters"),
  /** scan-node: how long its pod may take, image pull included. */
  waitS: durationS(),
  targetVersion: z
    .string()
    .nullable()
    .transform((s, ctx) => {
      if (s === null) return null;
      const v = parseTargetVersion(s);
      if (v === null)
        ctx.addIssue({ code: "custom", message: "must be a Kubernetes version like 1.40 or v1.43.0" });
      return v;
    }),
});
export type CollectorConfig = z.infer<typeof CollectorConfig>;

export { ConfigError };

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
    help: "agents|prometheus|static: where node reports come from (default agents)",
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
const ALL_FLAGS = [
  ...new Map(
    Object.values(COLLECTOR_FLAGS)
      .flat()
      .map((s) => [s.flags, s]),
  ).values(),
];
const OUTPUTS: Partial<Record<CollectorCommand, readonly string[]>> = {
  report: REPORT_FORMATS,
  serve: REPORT_FORMATS,
  verify: VERIFY_FORMATS,
  "scan-node": VERIFY_FORMATS,
};

/** The configuration from a parsed command: flags win over environment, environment over defaults. */
export function configFrom(
  cmd: Command,
  env: NodeJS.ProcessEnv,
  command?: CollectorCommand,
): CollectorConfig {
  const specs = command ? COLLECTOR_FLAGS[command] : ALL_FLAGS;
  const { values: v, typed } = readFlags(cmd, specs, env);
  // `--agents URL URL ...`: the URLs after the first arrive as operands; anywhere else an operand is a
  // mistake the user should hear about, not something silently ignored.
  const flagAgents = (v.agents as string[] | undefined) ?? [];
  // scan-node NODE: its one operand is the node, as in `kubectl debug node/NODE`.
  const operandNode = command === "scan-node" ? scanNodeOperand(cmd.args) : null;
  const flagFiles = (v.fromFiles as string[] | undefined) ?? [];
  const positionals = command === "scan-node" ? [] : cmd.args;
  // `--from-files DIR` or `--from-files a.json b.json`: the paths after the first arrive as operands.
  const filesTake = flagFiles.length > 0 && typed.get("fromFiles")?.startsWith("--") === true;
  if (
    positionals.length > 0 &&
    !filesTake &&
    (flagAgents.length === 0 || (v.source ?? "agents") !== "static")
  ) {
    throw new ConfigError(
      // Quoted, cut and counted: a pasted log as an argument must not become a log-sized error.
      `unexpected argument(s) ${positionals
        .slice(0, 3)
        .map((p) => JSON.stringify(p.length > 80 ? `${p.slice(0, 80)}…` : p))
        .join(" ")}${positionals.length > 3 ? ` and ${positionals.length - 3} more` : ""}` +
        (flagAgents.length > 0 ? " (extra --agents URLs need --source static)" : ""),
    );
  }
  if (flagFiles.length > 0 || v.demo === true) {
    // Saved reports replace the gather: a source to gather from as well would be ignored, so it is refused.
    const what = flagFiles.length > 0 ? typed.get("fromFiles")! : typed.get("demo")!;
    const other = (["demo", "fromFiles", "source", "agents", "agentsFile", "prometheusUrl"] as const).find(
      (f) => typed.has(f) && typed.get(f) !== what && !(f === "demo" && v.demo === false),
    );
    if (other !== undefined) throw new ConfigError(`${what} cannot be used with ${typed.get(other)}`);
  }
  if (v.changes === true && v.output === "junit")
    throw new ConfigError(`${typed.get("output")} junit is for the fleet report, not --changes`);
  const formats = command ? OUTPUTS[command] : undefined;
  if (formats && v.output !== undefined && !formats.includes(String(v.output)))
    throw new ConfigError(`invalid ${typed.get("output")}: must be one of ${formats.join("|")}`);
  const raw = {
    source: v.source ?? "agents",
    kubeconfig: v.kubeconfig ?? null,
    context: v.context ?? null,
    kubeProxyNamespace: v.kubeProxyNamespace ?? "kube-system",
    agentNamespace: v.agentNamespace ?? (command === "scan-node" ? "default" : "proxyscope"),
    agentSelector: v.agentSelector ?? "app.kubernetes.io/name=proxyscope-agent",
    agentPort: v.agentPort ?? "9977",
    agentAccess: v.agentAccess ?? "auto",
    agents: [...flagAgents, ...(filesTake ? [] : positionals)],
    agentsFile: v.agentsFile ?? null,
    fromFiles: [...flagFiles, ...(filesTake ? positionals : [])],
    demo: v.demo ?? false,
    acceptFile: v.acceptFile ?? null,
    prometheusUrl: v.prometheusUrl ?? null,
    prometheusNodeLabel: v.prometheusNodeLabel ?? "node",
    output: v.output ?? (command === "verify" || command === "scan-node" ? "text" : "table"),
    failOn: v.failOn ?? null,
    changes: v.changes ?? false,
    concurrency: v.concurrency ?? null,
    timeoutMs: v.timeoutMs ?? "5000",
    color: v.color ?? "auto",
    listen: v.listen ?? "0.0.0.0",
    port: v.port ?? "9978",
    intervalS: v.intervalS ?? "300",
    detailFrom: v.detailFrom ?? "loopback",
    webConfigFile: v.webConfigFile ?? null,
    service: v.service ?? null,
    servicePort: v.servicePort ?? null,
    node: operandNode ?? v.node ?? null,
    image: v.image ?? DEFAULT_SCAN_IMAGE,
    waitS: v.waitS ?? "300",
    targetVersion: v.targetVersion ?? null,
  };
  return checked(CollectorConfig, raw, typed, specs);
}

function scanNodeOperand(args: readonly string[]): string {
  if (args.length !== 1)
    throw new ConfigError(
      args.length === 0
        ? "scan-node needs the node's name: proxyscope scan-node NODE"
        : `scan-node takes one node, got ${args.length} operands`,
    );
  return args[0]!.replace(/^node\//, "");
}

/** Flags (no command word) of `command`, or of every command: what the unit and fuzz tests call. */
export function loadConfig(
  argv: string[],
  env: NodeJS.ProcessEnv = {},
  command?: CollectorCommand,
): CollectorConfig {
  const specs = command ? COLLECTOR_FLAGS[command] : ALL_FLAGS;
  return configFrom(parseFlagsOnly("proxyscope", specs, argv), env, command);
}
