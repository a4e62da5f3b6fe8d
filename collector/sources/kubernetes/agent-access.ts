import type { KubeConfig } from "@kubernetes/client-node";
import type http from "node:http";
import type https from "node:https";
import { httpGetVia, type Getter, type Via } from "../../../common/http.js";
import { redactUrls } from "../../../common/redact.js";
import type { AgentTarget } from "../agents.js";
import type { Kube } from "./kubeconfig.js";
import type { AgentPod } from "./pods.js";

// How the agent pods are reached: straight to the pod IP, or through the API server's pod proxy.

/**
 * GET through the API server with the kubeconfig's credentials (token, client certificate, exec plugin,
 * proxy-url), with the same deadline, byte cap and memory budget as a direct call. Prepared once per
 * gather: one agent (one pool of connections to the API server) for every node. The node list is read
 * through it too (nodes.ts).
 */
export function apiGetter(kc: KubeConfig): Getter {
  let via: Promise<Via> | null = null;
  const prepare = async (): Promise<Via> => {
    const o: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(o);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(o.headers ?? {})) if (v !== undefined) headers[k] = String(v);
    if (o.auth) headers.authorization = `Basic ${Buffer.from(o.auth).toString("base64")}`;
    return { agent: o.agent as http.Agent | undefined, headers };
  };
  return async (url, opts) => {
    via ??= prepare();
    let v: Via;
    try {
      v = await via;
    } catch (e) {
      via = null;
      return {
        ok: false,
        error: {
          kind: "unreachable",
          message: `cannot authenticate to the API server: ${redactUrls((e as Error).message)}`,
          command: url,
        },
      };
    }
    return httpGetVia(url, v, opts);
  };
}

export type AgentAccess = "auto" | "direct" | "proxy";

/** Direct in the cluster, where pod IPs are reachable; through the API server anywhere else (a laptop). */
export const directAccess = (access: AgentAccess, kube: Kube) =>
  access === "direct" || (access === "auto" && kube.inCluster);

/**
 * Agent calls in flight when --concurrency is not given. Straight to the agents: 64, which with ~2 KB
 * fleet digests holds little memory and halves a 5,000-node gather's wait on slow agents against 32
 * (bench/results/collector-speed.md). Through the pod proxy each call is an API request counted against
 * the API server's in-flight limit (--max-requests-inflight, 400 by default): 32.
 */
export const defaultAgentCalls = (direct: boolean): number => (direct ? 64 : 32);

/** The agent pods as targets, reached the way `access` says. */
export function agentTargets(kube: Kube, pods: readonly AgentPod[], access: AgentAccess): AgentTarget[] {
  if (directAccess(access, kube)) return pods.map((p) => ({ node: p.node, url: p.url }));
  const server = (kube.kc.getCurrentCluster()?.server ?? "").replace(/\/+$/, "");
  const get = apiGetter(kube.kc);
  return pods.map((p) => ({ node: p.node, url: `${server}${p.proxyPath}`, get }));
}
