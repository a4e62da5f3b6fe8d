import { hostname } from "node:os";
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
import { DEFAULT_TOOL_DIRS } from "./io/tools.js";
import { SEVERITIES } from "./report/schema.js";
import { parseHostPort, serviceAddressFromEnv } from "./parse/service-address.js";
import { DEFAULT_RULE_OPTIONS, type RuleOptions } from "./view/options.js";

const url = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//.test(u), "must be an http(s) URL");
// Bounded so that no setting overflows a timer (above MAX_TIMER_MS a Node timer fires after 1 ms).
const positiveMs = durationMs();
export { MAX_TIMER_MS, MAX_TIMER_S };

// One schema for flags and environment: a bad setting is named in a one-line error before anything runs.
export const AgentConfig = z.object({
  node: z.string().min(1).max(253),
  hostRoot: z.string().startsWith("/"),
  procRoot: z.string().startsWith("/"),
  sysRoot: z.string().startsWith("/"),
  toolDirs: z.array(z.string().startsWith("/")).min(1),
  kubeProxyMetricsUrl: url,
  kubeProxyHealthUrl: url,
  nodeIPs: z.array(z.ipv4().or(z.ipv6())),
  // The API server's --service-node-port-range, "LO-HI": kube-proxy does not publish it.
  nodePortRange: z.string().transform((s, ctx) => {
    const m = /^(\d{1,5})-(\d{1,5})$/.exec(s);
    const lo = Number(m?.[1]);
    const hi = Number(m?.[2]);
    if (!m || lo < 1 || hi > 65535 || lo > hi) {
      ctx.addIssue({ code: "custom", message: "must be LOW-HIGH ports, e.g. 30000-32767" });
      return z.NEVER;
    }
    return [lo, hi] as const;
  }),
  callTimeoutMs: positiveMs,
  probeTimeoutMs: positiveMs,
  // The parity snapshot (issue #17): the one file the agent writes, off unless a path is given.
  paritySnapshot: z.string().startsWith("/").max(4096).nullable(),
  parityMaxAgeS: z.coerce
    .number()
    .int()
    .min(60)
    .max(90 * 86400),
  // scan
  json: z.boolean(),
  failOn: z.enum(SEVERITIES).nullable(),
  color: z.enum(["auto", "always", "never"]),
  // serve
  listenHost,
  listenPort: port(0),
  scanIntervalS: durationS(),
  logLevel: z.enum(["fatal", "error", "warn", "info", "debug", "trace"]),
  webConfigFile: z.string().min(1).max(4096).nullable(),
  detailFrom: z.enum(["loopback", "any"]),
  // verify
  syncWindowS: durationS(600, true),
  serviceAddress: z
    .string()
    .refine((s) => parseHostPort(s) !== null, "must be IP:PORT or [IPv6]:PORT")
    .nullable(),
  skipConnect: z.boolean(),
  // cleanup
  apply: z.boolean(),
  strictArp: z.boolean(),
});
export type AgentConfig = z.infer<typeof AgentConfig>;

export const DEFAULT_PORT = 9977;

/** The rules' settings from the configuration. */
export function ruleOptions(cfg: Pick<AgentConfig, "nodePortRange">): RuleOptions {
  return { ...DEFAULT_RULE_OPTIONS, nodePortRange: cfg.nodePortRange };
}

const OPTIONS = {
  node: { type: "string", env: "NODE_NAME" },
  "host-root": { type: "string", env: "PROXYSCOPE_HOST_ROOT" },
  "proc-root": { type: "string", env: "PROXYSCOPE_PROC_ROOT" },
  "sys-root": { type: "string", env: "PROXYSCOPE_SYS_ROOT" },
  "tool-dir": { type: "string", multiple: true, env: "PROXYSCOPE_TOOL_DIRS" },
  "kube-proxy-metrics-url": { type: "string", env: "PROXYSCOPE_KUBE_PROXY_METRICS_URL" },
  "kube-proxy-health-url": { type: "string", env: "PROXYSCOPE_KUBE_PROXY_HEALTH_URL" },
  "node-ip": { type: "string", multiple: true, env: "NODE_IPS" },
  "node-port-range": { type: "string", env: "PROXYSCOPE_NODE_PORT_RANGE" },
  "call-timeout-ms": { type: "string", env: "PROXYSCOPE_CALL_TIMEOUT_MS" },
  "probe-timeout-ms": { type: "string", env: "PROXYSCOPE_PROBE_TIMEOUT_MS" },
  "parity-snapshot": { type: "string", env: "PROXYSCOPE_PARITY_SNAPSHOT" },
  "parity-max-age-s": { type: "string", env: "PROXYSCOPE_PARITY_MAX_AGE_S" },
  json: { type: "boolean" },
  "fail-on": { type: "string", env: "PROXYSCOPE_FAIL_ON" },
  color: { type: "string", env: "PROXYSCOPE_COLOR" },
  listen: { type: "string", env: "PROXYSCOPE_LISTEN" },
  port: { type: "string", env: "PROXYSCOPE_PORT" },
  "scan-interval-s": { type: "string", env: "PROXYSCOPE_SCAN_INTERVAL_S" },
  "log-level": { type: "string", env: "PROXYSCOPE_LOG_LEVEL" },
  // The exporter-toolkit flag name, as node_exporter spells it.
  "web.config.file": { type: "string", env: "PROXYSCOPE_WEB_CONFIG_FILE" },
  "detail-from": { type: "string", env: "PROXYSCOPE_DETAIL_FROM" },
  "sync-window-s": { type: "string", env: "PROXYSCOPE_SYNC_WINDOW_S" },
  "service-address": { type: "string" },
  "skip-connect": { type: "boolean" },
  apply: { type: "boolean" },
  "strict-arp": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

export class ConfigError extends Error {}

const FIELD_OF: Partial<Record<keyof typeof OPTIONS, string>> = {
  listen: "listenHost",
  port: "listenPort",
  "tool-dir": "toolDirs",
  "node-ip": "nodeIPs",
  "web.config.file": "webConfigFile",
  "kube-proxy-metrics-url": "kubeProxyMetricsUrl",
  "kube-proxy-health-url": "kubeProxyHealthUrl",
};
const camel = (k: string) => k.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** Flags win over environment, environment over defaults. Throws ConfigError with one readable line. */
export function loadConfig(argv: string[], env: NodeJS.ProcessEnv): AgentConfig & { help: boolean } {
  let values: Record<string, string | string[] | boolean | undefined>;
  try {
    const parsed = parseArgs({
      args: argv,
      options: Object.fromEntries(
        Object.entries(OPTIONS).map(([k, o]) => [
          k,
          {
            type: o.type,
            ...("multiple" in o ? { multiple: o.multiple } : {}),
            ...("short" in o ? { short: o.short } : {}),
          },
        ]),
      ),
      strict: true,
      allowPositionals: false,
    });
    values = parsed.values as typeof values;
  } catch (e) {
    throw new ConfigError(parseArgsError(e));
  }
  // Where each setting came from, so an error names what the user typed: the flag or the variable.
  const typed = new Map<string, string>();
  const pick = (k: keyof typeof OPTIONS): string | string[] | boolean | undefined => {
    const field = FIELD_OF[k] ?? camel(k);
    if (values[k] !== undefined) {
      typed.set(field, `--${k}`);
      return values[k];
    }
    const o = OPTIONS[k];
    const name = "env" in o ? o.env : undefined;
    const v = name ? env[name] : undefined;
    if (v === undefined || v === "") return undefined;
    typed.set(field, `${name}`);
    return "multiple" in o && o.multiple ? v.split(/[,\s]+/).filter(Boolean) : v;
  };
  const raw = {
    node: pick("node") ?? hostname(),
    hostRoot: pick("host-root") ?? "/",
    procRoot: pick("proc-root") ?? "/proc",
    sysRoot: pick("sys-root") ?? "/sys",
    toolDirs: pick("tool-dir") ?? [...DEFAULT_TOOL_DIRS],
    kubeProxyMetricsUrl: pick("kube-proxy-metrics-url") ?? "http://127.0.0.1:10249",
    kubeProxyHealthUrl: pick("kube-proxy-health-url") ?? "http://127.0.0.1:10256",
    nodeIPs: pick("node-ip") ?? [],
    nodePortRange: pick("node-port-range") ?? DEFAULT_RULE_OPTIONS.nodePortRange.join("-"),
    callTimeoutMs: pick("call-timeout-ms") ?? 10_000,
    probeTimeoutMs: pick("probe-timeout-ms") ?? 30_000,
    paritySnapshot: pick("parity-snapshot") ?? null,
    parityMaxAgeS: pick("parity-max-age-s") ?? 86_400,
    json: pick("json") ?? false,
    failOn: pick("fail-on") ?? null,
    color: pick("color") ?? "auto",
    listenHost: pick("listen") ?? "0.0.0.0",
    listenPort: pick("port") ?? DEFAULT_PORT,
    scanIntervalS: pick("scan-interval-s") ?? 60,
    logLevel: pick("log-level") ?? "info",
    webConfigFile: pick("web.config.file") ?? null,
    detailFrom: pick("detail-from") ?? "loopback",
    syncWindowS: pick("sync-window-s") ?? 10,
    serviceAddress: pick("service-address") ?? serviceAddressFromEnv(env) ?? null,
    skipConnect: pick("skip-connect") ?? false,
    apply: pick("apply") ?? false,
    strictArp: pick("strict-arp") ?? false,
  };
  const r = AgentConfig.safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const field = String(issue.path[0] ?? "");
    const flag = typed.get(field) ?? `--${field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    throw new ConfigError(`invalid ${flag}: ${issue.message}`);
  }
  return { ...r.data, help: values.help === true };
}
