#!/usr/bin/env node
import { EXIT, type ExitCode } from "../common/exit-codes.js";
import { VERSION } from "../common/version.js";
import { ConfigError, loadConfig, MAX_TIMER_MS, MAX_TIMER_S, type CollectorConfig } from "./config.js";
import { STALE_AFTER_S } from "./sources/agents.js";
import { MAX_AGENTS_FILE_BYTES } from "./sources/static.js";

// Only argv parsing and dispatch live here; each command orchestrates and renders in commands/<name>.ts,
// loaded on demand so `report` never loads the server and `schema` loads nothing else.
type Command = { run: (c: CollectorConfig) => Promise<ExitCode> };
const COMMANDS: Record<string, () => Promise<Command>> = {
  report: () => import("./commands/report.js"),
  serve: () => import("./commands/serve.js"),
  "lc-audit": () => import("./commands/lc-audit.js"),
  verify: () => import("./commands/verify.js"),
  schema: () => import("./commands/schema.js"),
};

const USAGE = `usage: proxyscope <command> [flags]
       kubectl proxyscope <command> [flags]   (installed on PATH as kubectl-proxyscope, a kubectl plugin)

commands:
  report     gather every node's report and the cluster's kube-proxy facts; print the fleet readiness report
             exit 0: nothing reaches --fail-on; 1: something does; 5: no report could be made
  serve      gather every --interval-s; serve / (HTML), /report (JSON), /metrics (fleet gauges), /healthz
  lc-audit   --service NS/NAME: each node's IPVS connection counts per endpoint, side by side
  verify     --node NAME: run that node's acceptance check (its agent's GET /verify); exit 1 on a failure
  schema     print the FleetReport JSON Schema
  version    print the version (also --version)

exit codes: 0 ok; 1 something reached --fail-on, or verify failed; 2 usage error; 3 internal error;
            5 no report (the API, Prometheus or every agent could not be read; no such Service or node)

flags:
  --source agents|prometheus|static   where node reports come from (default agents)
  --kubeconfig PATH                   default: $KUBECONFIG, ~/.kube/config, or in-cluster
  --namespace NS                      where kube-proxy lives (default kube-system)
  --agent-namespace NS --agent-selector SEL --agent-port N
                                      the agent pods (default proxyscope, app.kubernetes.io/name=proxyscope-agent, 9977)
  --agents URL|NODE=URL ...           static: agent base URLs;  --agents-file PATH: one "URL" or "NODE URL" a line
  --prometheus-url URL                prometheus: the HTTP API base (Prometheus, Thanos, Mimir)
  --prometheus-node-label NAME        the target label holding the node name (default node)
  --output table|json|markdown|html   (default table)
  --fail-on SEVERITY|VERDICT|unanswered
                                      info|warning|error|critical: a finding at or above it;
                                      ready|blocked|attention|clean|leftovers|unhealthy|unknown: a node with it
                                      unanswered: a node without a usable report, or a cluster read
                                      (ConfigMap, DaemonSet, Services, /version) the API would not give
  --target-version 1.40               also say what breaks when the cluster reaches that release (KEP-5495:
                                      1.37 gated, 1.40 off by default, 1.43 removed, 1.46 gate removed)
  --concurrency N --timeout-ms N      agent calls in flight (1 to 1024, default 32), per-call deadline
                                      (1 to ${MAX_TIMER_MS} ms, default 5000)
  --color auto|always|never
  --listen HOST --port N --interval-s N   serve (default 0.0.0.0:9978, every 300 s; at most ${MAX_TIMER_S} s)
  numbers are decimal digits; ports 0 to 65535 (--agent-port 1 to 65535); --agents-file: a regular file,
  at most ${MAX_AGENTS_FILE_BYTES} bytes; a report scanned more than ${STALE_AFTER_S} s ago is "stale"
  --service NS/NAME [--service-port NAME|NUMBER]   lc-audit
`;

async function main(argv: string[]): Promise<ExitCode> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "-h" || command === "--help" || command === "help") {
    process.stdout.write(USAGE);
    return command === undefined ? EXIT.usage : EXIT.ok;
  }
  if (command === "--version" || command === "version") {
    process.stdout.write(`proxyscope ${VERSION}\n`);
    return EXIT.ok;
  }
  const load = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (load === undefined) {
    process.stderr.write(`proxyscope: unknown command ${JSON.stringify(command)} (see --help)\n`);
    return EXIT.usage;
  }
  let c: CollectorConfig;
  try {
    c = loadConfig(rest);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`proxyscope: ${e.message} (see --help)\n`);
      return EXIT.usage;
    }
    throw e;
  }
  if (c.help) {
    process.stdout.write(USAGE);
    return EXIT.ok;
  }
  return (await load()).run(c);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`proxyscope: internal error: ${(e as Error)?.stack ?? String(e)}\n`);
    process.exitCode = EXIT.internalError;
  },
);
