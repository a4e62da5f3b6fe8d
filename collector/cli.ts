#!/usr/bin/env node
import { EXIT } from "../common/exit-codes.js";
import { VERSION } from "../common/version.js";
import { ConfigError, loadConfig, type CollectorConfig } from "./config.js";
import { reasonsToFail } from "./fail-on.js";
import { gather, type GatherConfig } from "./gather.js";
import { renderLcAudit } from "./lc-audit.js";
import { renderHtml } from "./render/html.js";
import { renderJson } from "./render/json.js";
import { renderMarkdown } from "./render/markdown.js";
import { renderTable } from "./render/table.js";
import { fleetReportJsonSchema, type FleetReport } from "./report/schema.js";
import { fetchVirtualServer } from "./sources/agents.js";
import { listAgentPods, loadKubeConfig, readService } from "./sources/kubernetes.js";
import { mapPool } from "./pool.js";
import { buildServer } from "./server.js";

const USAGE = `usage: proxyscope <command> [flags]

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
  --concurrency N --timeout-ms N      agent calls in flight (default 32), per-call deadline (default 5000)
  --color auto|always|never
  --listen HOST --port N --interval-s N   serve (default 0.0.0.0:9978, every 300 s)
  --service NS/NAME [--service-port NAME|NUMBER]   lc-audit
`;

function gatherConfig(c: CollectorConfig): GatherConfig {
  return {
    source: c.source,
    kubeconfig: c.kubeconfig,
    namespace: c.namespace,
    agentNamespace: c.agentNamespace,
    agentSelector: c.agentSelector,
    agentPort: c.agentPort,
    agents: c.agents,
    agentsFile: c.agentsFile,
    prometheusUrl: c.prometheusUrl,
    prometheusNodeLabel: c.prometheusNodeLabel,
    concurrency: c.concurrency,
    timeoutMs: c.timeoutMs,
  };
}

/** A progress bar on stderr, only on a terminal: piped output stays clean. */
function progressBar(): ((done: number, total: number) => void) | undefined {
  if (!process.stderr.isTTY) return undefined;
  return (done, total) => {
    const w = 30;
    const fill = Math.round((w * done) / Math.max(1, total));
    process.stderr.write(`\r[${"#".repeat(fill)}${".".repeat(w - fill)}] ${done}/${total} nodes`);
    if (done === total) process.stderr.write("\r\u001b[K");
  };
}

function render(r: FleetReport, c: CollectorConfig): string {
  switch (c.output) {
    case "json":
      return renderJson(r);
    case "markdown":
      return renderMarkdown(r);
    case "html":
      return renderHtml(r);
    case "table": {
      const colour =
        c.color === "always" ||
        (c.color === "auto" && process.stdout.isTTY === true && !process.env.NO_COLOR);
      return `${renderTable(r, colour)}\n`;
    }
  }
}

async function report(c: CollectorConfig): Promise<number> {
  const res = await gather(gatherConfig(c), progressBar());
  if (!res.ok) {
    process.stderr.write(`proxyscope: no report: ${res.error}\n`);
    return EXIT.noReport;
  }
  process.stdout.write(render(res.report, c));
  if (res.report.partial)
    process.stderr.write(
      `proxyscope: partial report: ${res.report.summary.unanswered} of ${res.report.summary.nodes} node(s) without a usable report\n`,
    );
  const reasons = reasonsToFail(res.report, c.failOn);
  if (reasons.length > 0) {
    process.stderr.write(
      `proxyscope: --fail-on ${c.failOn}: ${reasons.length} reached it (${reasons.slice(0, 5).join("; ")}${reasons.length > 5 ? "; ..." : ""})\n`,
    );
    return EXIT.findings;
  }
  return EXIT.ok;
}

async function serve(c: CollectorConfig): Promise<number> {
  const s = buildServer({
    intervalMs: c.intervalS * 1000,
    gather: () => gather(gatherConfig(c)),
    log: (l) => process.stderr.write(`${new Date().toISOString()} ${l}\n`),
  });
  await s.app.listen({ host: c.listen, port: c.port });
  const addr = s.app.server.address();
  process.stderr.write(
    `proxyscope: serving on ${typeof addr === "object" && addr ? `${addr.address}:${addr.port}` : c.port}\n`,
  );
  s.start();
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
  });
  s.stop();
  await s.app.close();
  return EXIT.ok;
}

async function lcAudit(c: CollectorConfig): Promise<number> {
  if (!c.service) {
    process.stderr.write("proxyscope: lc-audit needs --service NS/NAME\n");
    return EXIT.usage;
  }
  const kc = loadKubeConfig(c.kubeconfig);
  if (!kc.ok) {
    process.stderr.write(`proxyscope: ${kc.error}\n`);
    return EXIT.noReport;
  }
  const [ns, name] = c.service.split("/") as [string, string];
  const svc = await readService(kc.value, ns, name, c.timeoutMs);
  if (!svc.ok) {
    process.stderr.write(`proxyscope: ${svc.error}\n`);
    return EXIT.noReport;
  }
  const port =
    svc.value.ports.find(
      (p) => c.servicePort === null || p.name === c.servicePort || String(p.port) === c.servicePort,
    ) ?? null;
  const address = svc.value.clusterIPs.find((ip) => ip !== "None") ?? null;
  if (!port || !address) {
    process.stderr.write(`proxyscope: ${c.service} has no cluster IP or no such port\n`);
    return EXIT.noReport;
  }
  const pods = await listAgentPods(kc.value, {
    kubeconfig: c.kubeconfig,
    timeoutMs: c.timeoutMs,
    namespace: c.namespace,
    agentNamespace: c.agentNamespace,
    selector: c.agentSelector,
    port: c.agentPort,
  });
  if (!pods.ok) {
    process.stderr.write(`proxyscope: ${pods.error}\n`);
    return EXIT.noReport;
  }
  const q = { protocol: port.protocol, address, port: port.port };
  const outcomes = await mapPool(
    [...pods.value].sort((a, b) => a.node.localeCompare(b.node)),
    c.concurrency,
    (p) => fetchVirtualServer({ node: p.node, url: p.url }, q, { timeoutMs: c.timeoutMs }),
  );
  process.stdout.write(`${renderLcAudit({ service: c.service, ...q, outcomes })}\n`);
  return outcomes.some((o) => o.ok) ? EXIT.ok : EXIT.noReport;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "-h" || command === "--help" || command === "help") {
    process.stdout.write(USAGE);
    return command === undefined ? EXIT.usage : EXIT.ok;
  }
  if (command === "--version" || command === "version") {
    process.stdout.write(`proxyscope ${VERSION}\n`);
    return EXIT.ok;
  }
  if (command === "schema") {
    process.stdout.write(`${JSON.stringify(fleetReportJsonSchema(), null, 2)}\n`);
    return EXIT.ok;
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
  switch (command) {
    case "report":
      return report(c);
    case "serve":
      return serve(c);
    case "lc-audit":
      return lcAudit(c);
    case "verify":
      return (await import("./verify-node.js")).verifyNode(c);
    default:
      process.stderr.write(`proxyscope: unknown command ${JSON.stringify(command)} (see --help)\n`);
      return EXIT.usage;
  }
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
