import { EXIT, type ExitCode } from "../../common/exit-codes.js";
import { httpGet } from "../../common/http.js";
import { renderVerify } from "../../common/verify-render.js";
import { VerifyResult } from "../../common/verify-result.js";
import type { CollectorConfig } from "../config.js";
import { listAgentPods, loadKubeConfig } from "../sources/kubernetes.js";
import { targetsFromFlags } from "../sources/static.js";

// The agent waits out kube-proxy's sync window (10 s by default) before it answers.
const MIN_TIMEOUT_MS = 60_000;

/** Where NODE's agent is: a NODE=URL from --agents, else the agent pod the API places on NODE. */
async function agentUrl(c: CollectorConfig, node: string): Promise<{ url: string } | { error: string }> {
  const fromList = targetsFromFlags(c.agents).targets.find((t) => t.node === node);
  if (fromList) return { url: fromList.url };
  const kc = loadKubeConfig(c.kubeconfig);
  if (!kc.ok) return { error: kc.error };
  const pods = await listAgentPods(kc.value, c);
  if (!pods.ok) return { error: pods.error };
  const pod = pods.value.find((p) => p.node === node);
  return pod ? { url: pod.url } : { error: `no agent pod on node ${JSON.stringify(node)}` };
}

/** `proxyscope verify --node NAME`: that node's GET /verify. 0 passed, 1 failed, 5 no answer. */
export async function run(c: CollectorConfig): Promise<ExitCode> {
  if (c.node === null) {
    process.stderr.write("proxyscope: verify needs --node NAME\n");
    return EXIT.usage;
  }
  const target = await agentUrl(c, c.node);
  if ("error" in target) {
    process.stderr.write(`proxyscope: ${target.error}\n`);
    return EXIT.noReport;
  }
  const url = `${target.url.replace(/\/+$/, "")}/verify`;
  const res = await httpGet(url, { timeoutMs: Math.max(c.timeoutMs, MIN_TIMEOUT_MS), maxBytes: 1024 * 1024 });
  if (!res.ok || res.status !== 200) {
    process.stderr.write(`proxyscope: ${url}: ${res.ok ? `HTTP ${res.status}` : res.error.message}\n`);
    return EXIT.noReport;
  }
  let parsed;
  try {
    parsed = VerifyResult.safeParse(JSON.parse(res.body));
  } catch {
    parsed = null;
  }
  if (!parsed?.success) {
    process.stderr.write(`proxyscope: ${url} did not answer a verify result\n`);
    return EXIT.noReport;
  }
  const v = parsed.data;
  process.stdout.write(c.output === "json" ? `${JSON.stringify(v, null, 2)}\n` : `${renderVerify(v)}\n`);
  return v.passed ? EXIT.ok : EXIT.findings;
}
