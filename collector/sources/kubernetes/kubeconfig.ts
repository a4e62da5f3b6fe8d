import { KubeConfig } from "@kubernetes/client-node";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import { redactUrls } from "../../../common/redact.js";
import type { Result } from "../../../common/result.js";

/** Which kubeconfig to load, as kubectl takes it: --kubeconfig, --context, then $KUBECONFIG. */
interface KubeSource {
  kubeconfig: string | null;
  context: string | null;
}

export interface Kube {
  kc: KubeConfig;
  /** Loaded from the pod's service account: the collector runs in the cluster, beside the agents. */
  inCluster: boolean;
}

const SERVICE_ACCOUNT_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token";

/**
 * Loads the client config the way kubectl does: --kubeconfig, else every file in $KUBECONFIG, else
 * ~/.kube/config, else the pod's service account; then --context. Never throws; with nothing to load
 * it says where it looked (the client's own fallback is a localhost:8080 it then refuses to speak to).
 */
export function loadKubeConfig(
  src: KubeSource,
  env: NodeJS.ProcessEnv = process.env,
  home: string = homedir(),
): Result<Kube> {
  const kc = new KubeConfig();
  let inCluster = false;
  const looked: string[] = [];
  try {
    const files = (env.KUBECONFIG ?? "").split(delimiter).filter(Boolean);
    const homeConfig = join(home, ".kube", "config");
    if (src.kubeconfig) kc.loadFromFile(src.kubeconfig);
    else if (files.length > 0) kc.loadFromDefault();
    else if (existsSync(homeConfig)) kc.loadFromFile(homeConfig);
    else if (env.KUBERNETES_SERVICE_HOST && existsSync(SERVICE_ACCOUNT_TOKEN)) {
      kc.loadFromCluster();
      inCluster = true;
    } else {
      looked.push(
        "--kubeconfig (not given)",
        "$KUBECONFIG (not set)",
        `${homeConfig} (no such file)`,
        `the in-cluster service account (${env.KUBERNETES_SERVICE_HOST ? `${SERVICE_ACCOUNT_TOKEN}: no such file` : "KUBERNETES_SERVICE_HOST not set: not in a pod"})`,
      );
      return { ok: false, error: `no kubeconfig found; looked at ${looked.join(", ")}` };
    }
    const chosen = chooseCluster(kc, src.context);
    return chosen.ok ? { ok: true, value: { kc, inCluster } } : chosen;
  } catch (e) {
    return {
      ok: false,
      error: `cannot load kubeconfig: ${redactUrls((e as Error).message.split("\n")[0] ?? "")}`,
    };
  }
}

/** --context, then the cluster it names: one the client can speak to. */
function chooseCluster(kc: KubeConfig, context: string | null): Result<null> {
  if (context !== null) {
    const names = kc.getContexts().map((c) => c.name);
    if (!names.includes(context))
      return {
        ok: false,
        error: `no context ${JSON.stringify(context.slice(0, 100))} in the kubeconfig (it has: ${names.slice(0, 10).join(", ") || "none"})`,
      };
    kc.setCurrentContext(context);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster)
    return {
      ok: false,
      error: "kubeconfig names no current cluster (set current-context or pass --context)",
    };
  if (cluster.server.startsWith("http:") && !cluster.skipTLSVerify)
    return {
      ok: false,
      error: `cluster ${JSON.stringify(cluster.name)} is plain http (${redactUrls(cluster.server)}): the client speaks http only with insecure-skip-tls-verify: true`,
    };
  return { ok: true, value: null };
}
