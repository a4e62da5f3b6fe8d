#!/usr/bin/env node
import { AgentConfig, ConfigError, loadConfig, MAX_TIMER_MS, MAX_TIMER_S, ruleOptions } from "./config.js";
import { ToolRunner } from "./io/run.js";
import { renderText } from "./render/text.js";
import { nodeReportJsonSchema, SEVERITIES, type NodeReport } from "./report/schema.js";
import { scanNode } from "./scan.js";
import { EXIT } from "../common/exit-codes.js";
import { VERSION as AGENT_VERSION } from "../common/version.js";

const USAGE = `usage: proxyscope-agent <command> [flags]

commands:
  scan      scan this node once and print the report (exit 1 when a finding reaches --fail-on)
  serve     run as the node agent: scan on an interval, serve /metrics, /report, /healthz, /readyz, /verify
  verify    the node acceptance check after a switch to nftables mode (exit 1 on any failure)
  cleanup   remove what ipvs mode left behind: a dry run unless --apply, refused unless kube-proxy
            on this node answers nftables mode
  schema    print the NodeReport JSON Schema
  version   print the version (also --version)

exit codes: 0 ok; 1 a finding reached --fail-on, a verify check failed or a cleanup action failed;
            2 usage error; 3 internal error; 4 cleanup --apply refused

flags (each also from the environment variable in brackets):
  --node NAME                    node name [NODE_NAME] (default: hostname)
  --host-root DIR                where the host's / is mounted [PROXYSCOPE_HOST_ROOT] (default /)
  --proc-root DIR, --sys-root DIR
  --tool-dir DIR                 where nft, ipset, ipvsadm, ip, iptables-*-save are (repeatable)
  --kube-proxy-metrics-url URL   kube-proxy's metricsBindAddress (default http://127.0.0.1:10249)
  --kube-proxy-health-url URL    kube-proxy's healthzBindAddress (default http://127.0.0.1:10256)
  --node-ip IP                   the node's primary address(es) from the Node object (repeatable) [NODE_IPS]
  --node-port-range LO-HI        the API server's --service-node-port-range (default 30000-32767); NodePorts
                                 kube-proxy holds in its KUBE-NODE-PORT-* ipsets or nftables maps count anyway
                                 [PROXYSCOPE_NODE_PORT_RANGE]
  --call-timeout-ms N, --probe-timeout-ms N
                                 per tool call / per probe, 1 to ${MAX_TIMER_MS} ms (defaults 10000, 30000)
  --json                         scan: print the NodeReport as JSON
  --fail-on SEVERITY             scan: exit 1 when a finding is at least ${SEVERITIES.join("|")}
  --color auto|always|never
  --listen HOST --port N         serve: address to listen on (default 0.0.0.0:9977; port 0 to 65535, decimal)
  --scan-interval-s N            serve: seconds between scans (default 60, at most ${MAX_TIMER_S})
  --log-level LEVEL
  --web.config.file FILE         serve: TLS and basic auth, in the Prometheus exporter-toolkit format
                                 (the file node_exporter reads) [PROXYSCOPE_WEB_CONFIG_FILE]
  --detail-from loopback|any     serve: who may read /report, /report/previous, /ipvs/virtual-server and
                                 /verify without authentication (default loopback) [PROXYSCOPE_DETAIL_FROM]
  --parity-snapshot FILE         keep IPVS's Services in FILE while in ipvs mode and compare them with
                                 nftables after the switch (off unless given; the DaemonSet passes
                                 /var/lib/proxyscope/ipvs-snapshot.json) [PROXYSCOPE_PARITY_SNAPSHOT]
  --parity-max-age-s N           a snapshot older than this is stale, never compared (default 86400)
  --sync-window-s N              verify: seconds between two reads of the sync-failure counter (0: one read; at most 600)
  --service-address HOST:PORT    verify: the kubernetes Service to connect to [KUBERNETES_SERVICE_HOST/PORT]
  --skip-connect                 verify: do not try the Service connection (reported as skipped)
  --apply                        cleanup: carry out the actions (default: print them)
  --strict-arp                   cleanup: also reset net.ipv4.conf.all.arp_ignore/arp_announce
`;

export function scanInput(cfg: AgentConfig) {
  return {
    node: cfg.node,
    agentVersion: AGENT_VERSION,
    hostRoot: cfg.hostRoot,
    procRoot: cfg.procRoot,
    sysRoot: cfg.sysRoot,
    tools: new ToolRunner(cfg.toolDirs),
    kubeProxyMetricsUrl: cfg.kubeProxyMetricsUrl.replace(/\/+$/, ""),
    kubeProxyHealthUrl: cfg.kubeProxyHealthUrl.replace(/\/+$/, ""),
    nodeIPs: cfg.nodeIPs,
    ruleOptions: ruleOptions(cfg),
    callTimeoutMs: cfg.callTimeoutMs,
    parity:
      cfg.paritySnapshot === null
        ? null
        : { path: cfg.paritySnapshot, maxAgeS: cfg.parityMaxAgeS, node: cfg.node },
    probeTimeoutMs: cfg.probeTimeoutMs,
  };
}

export function reachesSeverity(r: NodeReport, failOn: AgentConfig["failOn"]): boolean {
  if (failOn === null) return false;
  const floor = SEVERITIES.indexOf(failOn);
  return r.findings.some((f) => SEVERITIES.indexOf(f.severity) >= floor);
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "-h" || command === "--help" || command === "help") {
    process.stdout.write(USAGE);
    return command === undefined ? EXIT.usage : EXIT.ok;
  }
  if (command === "--version" || command === "version") {
    process.stdout.write(`proxyscope-agent ${AGENT_VERSION}\n`);
    return EXIT.ok;
  }
  if (command === "schema") {
    process.stdout.write(`${JSON.stringify(nodeReportJsonSchema(), null, 2)}\n`);
    return EXIT.ok;
  }
  let cfg: ReturnType<typeof loadConfig>;
  try {
    cfg = loadConfig(rest, process.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`proxyscope-agent: ${e.message} (see --help)\n`);
      return EXIT.usage;
    }
    throw e;
  }
  if (cfg.help) {
    process.stdout.write(USAGE);
    return EXIT.ok;
  }
  const input = scanInput(cfg);
  // One-shot commands end every tool call still running when they are done (a probe past its
  // deadline may still be waiting on one), so they exit within their deadlines whatever the tools do.
  if (command === "scan" || command === "verify" || command === "cleanup") {
    try {
      return await oneShot(command, cfg, input);
    } finally {
      input.tools.close();
    }
  }
  if (command === "serve") {
    // Loaded only here: `scan` and `schema` stay free of the server's dependencies.
    const { runServe } = await import("./serve.js");
    const { WebConfigError } = await import("./server/web-config.js");
    try {
      return await runServe(cfg, input);
    } catch (e) {
      if (!(e instanceof WebConfigError)) throw e;
      process.stderr.write(`proxyscope-agent: ${e.message}\n`);
      return 2;
    }
  }
  process.stderr.write(`proxyscope-agent: unknown command ${JSON.stringify(command)} (see --help)\n`);
  return EXIT.usage;
}

async function oneShot(
  command: "scan" | "verify" | "cleanup",
  cfg: AgentConfig,
  input: ReturnType<typeof scanInput>,
): Promise<number> {
  switch (command) {
    case "scan": {
      const report = await scanNode(input);
      const colour =
        cfg.color === "always" ||
        (cfg.color === "auto" && process.stdout.isTTY === true && !process.env.NO_COLOR);
      process.stdout.write(
        cfg.json ? `${JSON.stringify(report, null, 2)}\n` : `${renderText(report, colour)}\n`,
      );
      return reachesSeverity(report, cfg.failOn) ? EXIT.findings : EXIT.ok;
    }
    case "verify":
      return (await import("./verify/command.js")).verifyCommand(cfg, input);
    case "cleanup":
      return (await import("./cleanup/command.js")).cleanupCommand(cfg, input);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`proxyscope-agent: internal error: ${(e as Error)?.stack ?? String(e)}\n`);
    process.exitCode = EXIT.internalError;
  },
);
