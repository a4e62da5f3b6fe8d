import { hostname } from "node:os";
import { z } from "zod";
import {
  checked,
  ConfigError,
  parseFlagsOnly,
  readFlags,
  type Command,
  type FlagSpec,
} from "../common/cli.js";
import { statSync } from "node:fs";
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
import { COLOR_WHEN } from "../common/colour.js";
import { DEFAULT_TOOL_DIRS, DEFAULT_WITNESS_DIR } from "./io/tools.js";
import { SEVERITIES } from "./report/severities.js";
import { parseHostPort, serviceAddressFromEnv } from "./parse/service-address.js";
import { DEFAULT_RULE_OPTIONS, type RuleOptions } from "./view/options.js";

// Bounded so that no setting overflows a timer (above MAX_TIMER_MS a Node timer fires after 1 ms).
const positiveMs = durationMs();
export { MAX_TIMER_MS, MAX_TIMER_S };

// One schema for flags and environment: a bad setting is named in a one-line error before anything runs.
export const AgentConfig = z.object({
  node: nodeName,
  hostRoot: z.string().startsWith("/"),
  procRoot: z.string().startsWith("/"),
  sysRoot: z.string().startsWith("/"),
  toolDirs: z.array(z.string().startsWith("/")).min(1),
  kubeProxyNftDir: z.string().startsWith("/").max(4096),
  kubeProxyMetricsUrl: baseUrl,
  kubeProxyHealthUrl: baseUrl,
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
  // The parity snapshot: the one file the agent writes, off unless a path is given.
  paritySnapshot: z.string().startsWith("/").max(4096).nullable(),
  parityMaxAgeS: count(60, 90 * 86400),
  // scan, verify, cleanup
  output: z.enum(["text", "json", "yaml"]),
  failOn: z.enum(SEVERITIES).nullable(),
  color: z.enum(COLOR_WHEN),
  // serve
  listenHost,
  listenPort: port(0),
  scanIntervalS: durationS(),
  // Sub-second scans, for the benchmarks: seconds are whole numbers like every other number flag.
  scanIntervalMs: durationMs().nullable(),
  fullReadIntervalS: durationS(undefined, true),
  ipvsConnIntervalS: durationS(undefined, true),
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
  // The mode the node should be in: nftables after the switch, ipvs after a rollback.
  expectMode: z.enum(["nftables", "ipvs"]),
  nodePortConnect: z.boolean(),
  // cleanup
  apply: z.boolean(),
  strictArp: z.boolean(),
});
export type AgentConfig = z.infer<typeof AgentConfig>;

const DEFAULT_PORT = 9977;

/** The rules' settings from the configuration. */
export function ruleOptions(cfg: Pick<AgentConfig, "nodePortRange">): RuleOptions {
  return { ...DEFAULT_RULE_OPTIONS, nodePortRange: cfg.nodePortRange };
}

export { ConfigError };

export type AgentCommand = "scan" | "serve" | "verify" | "cleanup";

// Every flag once: its config field, its help line, its environment variable (PROXYSCOPE_<FLAG> unless
// named: NODE_NAME and NODE_IPS are what the DaemonSet sets from the downward API).
const NODE: FlagSpec[] = [
  {
    flags: "--node <name>",
    field: "node",
    help: "node name (default: the hostname)",
    env: ["PROXYSCOPE_NODE", "NODE_NAME"],
  },
  { flags: "--host-root <dir>", field: "hostRoot", help: "where the host's / is mounted (default /)" },
  { flags: "--proc-root <dir>", field: "procRoot", help: "the host's /proc (default /proc)" },
  { flags: "--sys-root <dir>", field: "sysRoot", help: "the host's /sys (default /sys)" },
  {
    flags: "--tool-dir <dir>",
    field: "toolDirs",
    help: "where nft, ipset, ipvsadm, ip, iptables-*-save are (repeatable)",
    multiple: true,
    env: ["PROXYSCOPE_TOOL_DIR", "PROXYSCOPE_TOOL_DIRS"],
  },
  {
    flags: "--kube-proxy-nft-dir <dir>",
    field: "kubeProxyNftDir",
    help: `where kube-proxy's image nft is kept as a witness: ld.so, lib/, nft (default ${DEFAULT_WITNESS_DIR})`,
  },

  {
    flags: "--kube-proxy-metrics-url <url>",
    field: "kubeProxyMetricsUrl",
    help: "kube-proxy's metricsBindAddress (default http://127.0.0.1:10249)",
  },
  {
    flags: "--kube-proxy-health-url <url>",
    field: "kubeProxyHealthUrl",
    help: "kube-proxy's healthzBindAddress (default http://127.0.0.1:10256)",
  },
  {
    flags: "--node-ip <ip>",
    field: "nodeIPs",
    help: "the node's primary address(es) from the Node object (repeatable)",
    multiple: true,
    env: ["PROXYSCOPE_NODE_IP", "NODE_IPS"],
  },
  {
    flags: "--node-port-range <lo-hi>",
    field: "nodePortRange",
    help: "the API server's --service-node-port-range (default 30000-32767)",
  },
  {
    flags: "--call-timeout-ms <n>",
    field: "callTimeoutMs",
    help: `per tool call, 1 to ${MAX_TIMER_MS} ms (default 10000)`,
  },
  {
    flags: "--probe-timeout-ms <n>",
    field: "probeTimeoutMs",
    help: `per probe, 1 to ${MAX_TIMER_MS} ms (default 30000)`,
  },
  {
    flags: "--log-level <level>",
    field: "logLevel",
    help: "fatal|error|warn|info|debug|trace (default info)",
  },
];
const OUTPUT: FlagSpec[] = [
  { flags: "-o, --output <format>", field: "output", help: "text|json|yaml (default text)" },
  { flags: "--json", field: "json", help: "the same as -o json" },
];
const SCAN: FlagSpec[] = [
  {
    flags: "--fail-on <severity>",
    field: "failOn",
    help: `exit 1 when a finding is at least ${SEVERITIES.join("|")}`,
  },
  { flags: "--color <when>", field: "color", help: "auto|always|never (default auto; NO_COLOR is honoured)" },
];
const PARITY: FlagSpec[] = [
  {
    flags: "--parity-snapshot <file>",
    field: "paritySnapshot",
    help: "keep IPVS's Services in FILE while in ipvs mode and compare them with nftables after the switch (off unless given; the DaemonSet passes /var/lib/proxyscope/ipvs-snapshot.json)",
  },
  {
    flags: "--parity-max-age-s <n>",
    field: "parityMaxAgeS",
    help: "a snapshot older than this is stale, never compared (default 86400)",
  },
];
const SERVE: FlagSpec[] = [
  { flags: "--listen <host>", field: "listenHost", help: "address to listen on (default 0.0.0.0)" },
  { flags: "--port <n>", field: "listenPort", help: "port to listen on, 0 to 65535 (default 9977)" },
  {
    flags: "--scan-interval-s <n>",
    field: "scanIntervalS",
    help: `seconds between scans (default 60, at most ${MAX_TIMER_S})`,
  },
  {
    flags: "--scan-interval-ms <n>",
    field: "scanIntervalMs",
    help: "the same in milliseconds, for sub-second scans (benchmarks); instead of --scan-interval-s",
    hidden: true,
  },
  {
    flags: "--full-read-interval-s <n>",
    field: "fullReadIntervalS",
    help: "at most this many seconds between two full reads of the sources a scan reuses while their gate stands still: the nf_tables sources while the kernel's nf_tables generation id is unchanged (nft listings, iptables-nft-save), and in ipvs mode /proc/net/ip_vs, every link's addresses and the NodePort ipsets' members while kube-proxy has synced every change it saw and the ipsets' headers and the up links' addresses are unchanged (packet counters are as old as the read; default 3600; 0: read everything every scan)",
  },
  {
    flags: "--ipvs-conn-interval-s <n>",
    field: "ipvsConnIntervalS",
    help: "at most this many seconds between two reads of /proc/net/ip_vs_conn, the costliest read on a busy ipvs-mode node (~1 s of CPU per million connections); in between the report and the metrics give the last read's counts and their age (default 300; 0: every scan)",
  },
  {
    flags: "--web.config.file <file>",
    field: "webConfigFile",
    help: "TLS and basic auth, in the Prometheus exporter-toolkit format (the file node_exporter reads)",
  },
  {
    flags: "--detail-from <who>",
    field: "detailFrom",
    help: "loopback|any: who may read /report, /report/previous, /report/fleet, /parity, /ipvs/virtual-server and /verify without authentication (default loopback)",
  },
];
const VERIFY: FlagSpec[] = [
  {
    flags: "--sync-window-s <n>",
    field: "syncWindowS",
    help: "seconds between two reads of the sync-failure counter (0: one read; at most 600; default 10)",
  },
  {
    flags: "--service-address <host:port>",
    field: "serviceAddress",
    help: "the kubernetes Service to connect to (default: KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT)",
  },
  {
    flags: "--skip-connect",
    field: "skipConnect",
    help: "do not try the Service connection (reported as skipped)",
  },
  {
    flags: "--expect-mode <mode>",
    field: "expectMode",
    help: "nftables|ipvs: the mode the node should run (default nftables; ipvs checks a rollback: the ipvs data plane back)",
  },
  {
    flags: "--nodeport-connect",
    field: "nodePortConnect",
    help: "also open one TCP connection to a NodePort on each node address (sends traffic; default: rules only)",
  },
];
const CLEANUP: FlagSpec[] = [
  { flags: "--apply", field: "apply", help: "carry out the actions (default: print them)" },
  { flags: "--strict-arp", field: "strictArp", help: "also reset net.ipv4.conf.all.arp_ignore/arp_announce" },
];

/** Which flags each command takes; `serve` also answers /verify, so it takes verify's. */
export const AGENT_FLAGS: Record<AgentCommand, readonly FlagSpec[]> = {
  scan: [...OUTPUT, ...SCAN, ...PARITY, ...NODE],
  verify: [...OUTPUT, ...VERIFY, ...PARITY, ...NODE],
  cleanup: [...CLEANUP, ...OUTPUT, ...NODE],
  serve: [...SERVE, ...VERIFY, ...PARITY, ...NODE],
};
const ALL_FLAGS = [
  ...new Map(
    Object.values(AGENT_FLAGS)
      .flat()
      .map((s) => [s.field, s]),
  ).values(),
];

/** The configuration from a parsed command: flags win over environment, environment over defaults. */
export function configFrom(
  cmd: Command,
  env: NodeJS.ProcessEnv,
  specs: readonly FlagSpec[] = ALL_FLAGS,
): AgentConfig {
  if (cmd.args.length > 0) throw new ConfigError(`Unexpected argument '${cmd.args[0]!.slice(0, 80)}'`);
  const { values: v, typed } = readFlags(cmd, specs, env);
  if (v.json === true && v.output !== undefined && v.output !== "json")
    throw new ConfigError(`--json and ${typed.get("output")} ${String(v.output)} disagree: give one of them`);
  const raw = {
    node: v.node ?? hostname(),
    hostRoot: v.hostRoot ?? "/",
    procRoot: v.procRoot ?? "/proc",
    sysRoot: v.sysRoot ?? "/sys",
    toolDirs: v.toolDirs ?? [...DEFAULT_TOOL_DIRS],
    kubeProxyNftDir: v.kubeProxyNftDir ?? DEFAULT_WITNESS_DIR,
    kubeProxyMetricsUrl: v.kubeProxyMetricsUrl ?? "http://127.0.0.1:10249",
    kubeProxyHealthUrl: v.kubeProxyHealthUrl ?? "http://127.0.0.1:10256",
    nodeIPs: v.nodeIPs ?? [],
    nodePortRange: v.nodePortRange ?? DEFAULT_RULE_OPTIONS.nodePortRange.join("-"),
    callTimeoutMs: v.callTimeoutMs ?? 10_000,
    probeTimeoutMs: v.probeTimeoutMs ?? 30_000,
    paritySnapshot: v.paritySnapshot ?? null,
    parityMaxAgeS: v.parityMaxAgeS ?? 86_400,
    output: v.output ?? (v.json === true ? "json" : "text"),
    failOn: v.failOn ?? null,
    color: v.color ?? "auto",
    listenHost: v.listenHost ?? "0.0.0.0",
    listenPort: v.listenPort ?? DEFAULT_PORT,
    scanIntervalS: v.scanIntervalS ?? 60,
    scanIntervalMs: v.scanIntervalMs ?? null,
    // The generation id sees every change; the interval only refreshes packet counters in reused reads.
    // kube-proxy re-adds its chains in its hourly full sync (FullSyncPeriod), which moves the generation
    // anyway (re-adding an existing chain does: measured on 6.18).
    fullReadIntervalS: v.fullReadIntervalS ?? 3600,
    // A connection count for planning the switch needs no per-scan freshness (its age is reported).
    ipvsConnIntervalS: v.ipvsConnIntervalS ?? 300,
    logLevel: v.logLevel ?? "info",
    webConfigFile: v.webConfigFile ?? null,
    detailFrom: v.detailFrom ?? "loopback",
    syncWindowS: v.syncWindowS ?? 10,
    serviceAddress: v.serviceAddress ?? serviceAddressFromEnv(env) ?? null,
    skipConnect: v.skipConnect ?? false,
    expectMode: v.expectMode ?? "nftables",
    nodePortConnect: v.nodePortConnect ?? false,
    apply: v.apply ?? false,
    strictArp: v.strictArp ?? false,
  };
  if (v.scanIntervalS !== undefined && v.scanIntervalMs !== undefined)
    throw new ConfigError(
      `${typed.get("scanIntervalS")} and ${typed.get("scanIntervalMs")}: give one of them`,
    );
  const cfg = checked(AgentConfig, raw, typed, specs, { serviceAddress: "KUBERNETES_SERVICE_HOST/PORT" });
  if (cfg.scanIntervalMs !== null) cfg.scanIntervalS = cfg.scanIntervalMs / 1000;
  // A host root that is not there would read as a host with nothing on it.
  const notDir = notADirectory(cfg.hostRoot);
  if (notDir !== null) throw new ConfigError(`invalid ${typed.get("hostRoot") ?? "--host-root"}: ${notDir}`);
  return cfg;
}

/** Why `path` is not a directory we can read, or null when it is one. */
function notADirectory(path: string): string | null {
  try {
    return statSync(path).isDirectory() ? null : "not a directory";
  } catch (e) {
    return `not a directory (${(e as NodeJS.ErrnoException).code ?? "unreadable"})`;
  }
}

/**
 * Flags (no command word) of `command`, or of every command: what the unit tests call. Throws
 * ConfigError with one readable line.
 */
export function loadConfig(argv: string[], env: NodeJS.ProcessEnv, command?: AgentCommand): AgentConfig {
  const specs = command ? AGENT_FLAGS[command] : ALL_FLAGS;
  return configFrom(parseFlagsOnly("proxyscope-agent", specs, argv), env, specs);
}
