import { errorLine } from "../../common/cli.js";
import { EXIT, type ExitCode } from "../../common/exit-codes.js";
import type { CollectorConfig } from "../config.js";
import { mapPool } from "../gather/pool.js";
import { renderLcAudit } from "../render/lc-audit.js";
import { fetchVirtualServer } from "../sources/agents.js";
import {
  agentTargets,
  defaultAgentCalls,
  directAccess,
  listAgentPods,
  loadKubeConfig,
  readService,
} from "../sources/kubernetes/index.js";

/** `proxyscope lc-audit --service NS/NAME`: each node's own IPVS counts for that Service, side by side. */
export async function run(c: CollectorConfig): Promise<ExitCode> {
  if (!c.service) {
    process.stderr.write(errorLine("proxyscope", "lc-audit needs --service NS/NAME (see --help)"));
    return EXIT.usage;
  }
  const kc = loadKubeConfig(c);
  if (!kc.ok) {
    process.stderr.write(errorLine("proxyscope", `${kc.error}`));
    return EXIT.noReport;
  }
  const [ns, name] = c.service.split("/") as [string, string];
  const svc = await readService(kc.value.kc, ns, name, c.timeoutMs);
  if (!svc.ok) {
    process.stderr.write(errorLine("proxyscope", `${svc.error}`));
    return EXIT.noReport;
  }
  const port =
    svc.value.ports.find(
      (p) => c.servicePort === null || p.name === c.servicePort || String(p.port) === c.servicePort,
    ) ?? null;
  const address = svc.value.clusterIPs.find((ip) => ip !== "None") ?? null;
  if (!port || !address) {
    process.stderr.write(errorLine("proxyscope", `${c.service} has no cluster IP or no such port`));
    return EXIT.noReport;
  }
  const pods = await listAgentPods(kc.value.kc, c);
  if (!pods.ok) {
    process.stderr.write(errorLine("proxyscope", `${pods.error}`));
    return EXIT.noReport;
  }
  const q = { protocol: port.protocol, address, port: port.port };
  const outcomes = await mapPool(
    agentTargets(kc.value, pods.value, c.agentAccess).sort((a, b) => a.node!.localeCompare(b.node!)),
    c.concurrency ?? defaultAgentCalls(directAccess(c.agentAccess, kc.value)),
    (t) => fetchVirtualServer(t, q, { timeoutMs: c.timeoutMs }),
  );
  process.stdout.write(`${renderLcAudit({ service: c.service, ...q, outcomes })}\n`);
  return outcomes.some((o) => o.ok) ? EXIT.ok : EXIT.noReport;
}
