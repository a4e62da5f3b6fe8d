import { EXIT, type ExitCode } from "../../common/exit-codes.js";
import { httpGet } from "../../common/http.js";
import { renderVerify } from "../../common/verify-render.js";
import { errorLine } from "../../common/cli.js";
import { readVerifyAnswer } from "../../common/verify-result.js";
import type { CollectorConfig } from "../config.js";
import { proxyRefusal, type AgentTarget } from "../sources/agents.js";
import { agentTargets, listAgentPods, loadKubeConfig } from "../sources/kubernetes/index.js";
import { renderStructured } from "../../common/structured.js";
import { targetsFromFlags } from "../sources/static.js";

// The agent waits out kube-proxy's sync window (10 s by default) before it answers.
const MIN_TIMEOUT_MS = 60_000;

/** Where NODE's agent is: a NODE=URL from --agents, else the agent pod the API places on NODE. */
async function agentUrl(c: CollectorConfig, node: string): Promise<AgentTarget | { error: string }> {
  const fromList = targetsFromFlags(c.agents).targets.find((t) => t.node === node);
  if (fromList) return fromList;
  const kc = loadKubeConfig(c);
  if (!kc.ok) return { error: kc.error };
  const pods = await listAgentPods(kc.value.kc, c);
  if (!pods.ok) return { error: pods.error };
  const pod = pods.value.filter((p) => p.node === node);
  return pod.length > 0
    ? agentTargets(kc.value, pod, c.agentAccess)[0]!
    : { error: `no agent pod on node ${JSON.stringify(node)}` };
}

/** `proxyscope verify --node NAME`: that node's GET /verify. 0 passed, 1 failed, 5 no answer. */
export async function run(c: CollectorConfig): Promise<ExitCode> {
  if (c.node === null) {
    process.stderr.write(errorLine("proxyscope", "verify needs --node NAME (see --help)"));
    return EXIT.usage;
  }
  const target = await agentUrl(c, c.node);
  if ("error" in target) {
    process.stderr.write(errorLine("proxyscope", target.error));
    return EXIT.noReport;
  }
  const url = `${target.url.replace(/\/+$/, "")}/verify`;
  const res = await (target.get ?? httpGet)(url, {
    timeoutMs: Math.max(c.timeoutMs, MIN_TIMEOUT_MS),
    maxBytes: 1024 * 1024,
  });
  if (!res.ok || res.status !== 200) {
    const why = !res.ok ? res.error.message : (proxyRefusal(target, res)?.reason ?? `HTTP ${res.status}`);
    // The API server's and the agent's words, and a URL that may carry the kubeconfig's password.
    process.stderr.write(errorLine("proxyscope", `${url}: ${why}`));
    return EXIT.noReport;
  }
  const read = readVerifyAnswer(res.body);
  if (!read.ok) {
    process.stderr.write(errorLine("proxyscope", `${url} did not answer a verify result (${read.error})`));
    return EXIT.noReport;
  }
  const v = read.result;
  process.stdout.write(
    c.output === "json" || c.output === "yaml"
      ? renderStructured(v, c.output)
      : `${renderVerify(v, read.unknownChecks)}\n`,
  );
  return v.passed ? EXIT.ok : EXIT.findings;
}
