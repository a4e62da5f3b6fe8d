import {
  checked,
  ConfigError,
  parseFlagsOnly,
  readFlags,
  type Command,
  type ReadFlags,
} from "../common/cli.js";
import { MAX_TIMER_MS, MAX_TIMER_S } from "../common/flag-bounds.js";
import {
  ALL_FLAGS,
  COLLECTOR_FLAGS,
  DEFAULT_SCAN_IMAGE,
  OUTPUTS,
  type CollectorCommand,
} from "./config/flags.js";
import {
  refuseOutput,
  refuseSavedWithGather,
  refuseStrayOperands,
  scanNodeOperand,
} from "./config/operands.js";
import { CollectorConfig } from "./config/schema.js";

// The collector's configuration: flags win over environment, environment over the defaults below. The
// flags and their help are in config/flags.ts, the schema in config/schema.ts, the -o lists in
// config/formats.ts.
export { MAX_TIMER_MS, MAX_TIMER_S };
export { ConfigError };
export { REPORT_FORMATS, VERIFY_FORMATS } from "./config/formats.js";
export { AGENT_ACCESS, CollectorConfig } from "./config/schema.js";
export { COLLECTOR_FLAGS, DEFAULT_SCAN_IMAGE, type CollectorCommand } from "./config/flags.js";

/** The configuration from a parsed command: flags win over environment, environment over defaults. */
export function configFrom(
  cmd: Command,
  env: NodeJS.ProcessEnv,
  command?: CollectorCommand,
): CollectorConfig {
  const specs = command ? COLLECTOR_FLAGS[command] : ALL_FLAGS;
  const read = readFlags(cmd, specs, env);
  const { values: v, typed } = read;
  // scan-node NODE: its one operand is the node, as in `kubectl debug node/NODE` (checked first).
  const node = command === "scan-node" ? scanNodeOperand(cmd.args) : null;
  const flagFiles = (v.fromFiles as string[] | undefined) ?? [];
  const positionals = command === "scan-node" ? [] : cmd.args;
  // `--from-files DIR` or `--from-files a.json b.json`: the paths after the first arrive as operands.
  const filesTake = flagFiles.length > 0 && typed.get("fromFiles")?.startsWith("--") === true;
  refuseStrayOperands(positionals, filesTake, read);
  refuseSavedWithGather(read);
  refuseOutput(read, command ? OUTPUTS[command] : undefined);
  const operands = {
    agents: [...((v.agents as string[] | undefined) ?? []), ...(filesTake ? [] : positionals)],
    fromFiles: [...flagFiles, ...(filesTake ? positionals : [])],
    node,
  };
  return checked(CollectorConfig, withDefaults(v, operands, command), typed, specs);
}

/** Each field as read, or its default; the schema checks the lot. */
function withDefaults(
  v: ReadFlags["values"],
  operands: { agents: string[]; fromFiles: string[]; node: string | null },
  command: CollectorCommand | undefined,
): Record<keyof CollectorConfig, unknown> {
  return {
    source: v.source ?? "agents",
    kubeconfig: v.kubeconfig ?? null,
    context: v.context ?? null,
    kubeProxyNamespace: v.kubeProxyNamespace ?? "kube-system",
    agentNamespace: v.agentNamespace ?? (command === "scan-node" ? "default" : "proxyscope"),
    agentSelector: v.agentSelector ?? "app.kubernetes.io/name=proxyscope-agent",
    agentPort: v.agentPort ?? "9977",
    agentAccess: v.agentAccess ?? "auto",
    agents: operands.agents,
    agentsFile: v.agentsFile ?? null,
    fromFiles: operands.fromFiles,
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
    node: operands.node ?? v.node ?? null,
    image: v.image ?? DEFAULT_SCAN_IMAGE,
    waitS: v.waitS ?? "300",
    targetVersion: v.targetVersion ?? null,
  };
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
