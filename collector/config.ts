import { parseArgs } from "node:util";
import { z } from "zod";
import {
  durationMs,
  durationS,
  listenHost,
  MAX_TIMER_MS,
  MAX_TIMER_S,
  parseArgsError,
  port,
} from "../common/flag-bounds.js";
import { parseTargetVersion } from "./checks/target-version.js";
import { FAIL_ON_VALUES } from "./fail-on.js";

export { MAX_TIMER_MS, MAX_TIMER_S };

const positiveInt = (max: number) =>
  z
    .string()
    .regex(/^[0-9]+$/, "must be decimal digits")
    .transform(Number)
    .pipe(z.number().int().min(1, `must be from 1 to ${max}`).max(max, `must be from 1 to ${max}`));

// One schema for every flag: a bad setting is named in one line before anything runs.
export const CollectorConfig = z.object({
  source: z.enum(["agents", "prometheus", "static"]),
  kubeconfig: z.string().min(1).nullable(),
  namespace: z.string().min(1),
  agentNamespace: z.string().min(1),
  agentSelector: z.string().min(1),
  agentPort: port(1),
  agents: z.array(z.string()),
  agentsFile: z.string().min(1).nullable(),
  prometheusUrl: z
    .string()
    .url()
    .refine((u) => /^https?:\/\//.test(u), "must be an http(s) URL")
    .nullable(),
  prometheusNodeLabel: z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_]*$/, "must be a Prometheus label name"),
  output: z.enum(["table", "json", "markdown", "html"]),
  failOn: z.enum(FAIL_ON_VALUES).nullable(),
  concurrency: positiveInt(1024),
  // Bounded: above MAX_TIMER_MS a Node timer fires after 1 ms.
  timeoutMs: durationMs(),
  color: z.enum(["auto", "always", "never"]),
  listen: listenHost,
  port: port(0),
  intervalS: durationS(),
  service: z
    .string()
    .regex(/^[a-z0-9-]+\/[a-z0-9.-]+$/, "must be NAMESPACE/NAME")
    .nullable(),
  servicePort: z.string().nullable(),
  node: z.string().min(1).max(253).nullable(),
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
  help: z.boolean(),
});
export type CollectorConfig = z.infer<typeof CollectorConfig>;

const OPTIONS = {
  source: { type: "string", default: "agents" },
  kubeconfig: { type: "string" },
  namespace: { type: "string", default: "kube-system" },
  "agent-namespace": { type: "string", default: "proxyscope" },
  "agent-selector": { type: "string", default: "app.kubernetes.io/name=proxyscope-agent" },
  "agent-port": { type: "string", default: "9977" },
  agents: { type: "string", multiple: true },
  "agents-file": { type: "string" },
  "prometheus-url": { type: "string" },
  "prometheus-node-label": { type: "string", default: "node" },
  "target-version": { type: "string" },
  output: { type: "string", short: "o", default: "table" },
  "fail-on": { type: "string" },
  concurrency: { type: "string", default: "32" },
  "timeout-ms": { type: "string", default: "5000" },
  color: { type: "string", default: "auto" },
  listen: { type: "string", default: "0.0.0.0" },
  port: { type: "string", default: "9978" },
  "interval-s": { type: "string", default: "300" },
  service: { type: "string" },
  "service-port": { type: "string" },
  node: { type: "string" },
  help: { type: "boolean", short: "h", default: false },
} as const;

export class ConfigError extends Error {}

export function loadConfig(argv: string[]): CollectorConfig {
  let values: Record<string, string | boolean | string[] | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      options: OPTIONS,
      strict: true,
      allowPositionals: true,
    }));
  } catch (e) {
    throw new ConfigError(parseArgsError(e));
  }
  // `--agents URL URL ...`: the URLs after the first arrive as positionals; anywhere else a
  // positional is a mistake the user should hear about, not something silently ignored.
  const flagAgents = (values.agents as string[] | undefined) ?? [];
  if (positionals.length > 0 && (flagAgents.length === 0 || (values.source ?? "agents") !== "static")) {
    throw new ConfigError(
      // Quoted, cut and counted: a pasted log as an argument must not become a log-sized error.
      `unexpected argument(s) ${positionals
        .slice(0, 3)
        .map((p) => JSON.stringify(p.length > 80 ? `${p.slice(0, 80)}…` : p))
        .join(" ")}${positionals.length > 3 ? ` and ${positionals.length - 3} more` : ""}` +
        (flagAgents.length > 0 ? " (extra --agents URLs need --source static)" : ""),
    );
  }
  const agents = [...flagAgents, ...positionals];
  const raw = {
    source: values.source,
    kubeconfig: values.kubeconfig ?? null,
    namespace: values.namespace,
    agentNamespace: values["agent-namespace"],
    agentSelector: values["agent-selector"],
    agentPort: values["agent-port"],
    agents,
    agentsFile: values["agents-file"] ?? null,
    prometheusUrl: values["prometheus-url"] ?? null,
    prometheusNodeLabel: values["prometheus-node-label"],
    output: values.output,
    failOn: values["fail-on"] ?? null,
    concurrency: values.concurrency,
    timeoutMs: values["timeout-ms"],
    color: values.color,
    listen: values.listen,
    port: values.port,
    intervalS: values["interval-s"],
    service: values.service ?? null,
    servicePort: values["service-port"] ?? null,
    node: values.node ?? null,
    targetVersion: values["target-version"] ?? null,
    help: values.help,
  };
  const parsed = CollectorConfig.safeParse(raw);
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    throw new ConfigError(
      `invalid --${String(i.path[0]).replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}: ${i.message}`,
    );
  }
  return parsed.data;
}
