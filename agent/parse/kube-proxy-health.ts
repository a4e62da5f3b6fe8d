import type { KubeProxyHealthFacts } from "../facts/kube-proxy.js";
import { excerpt, parsed, unparsable } from "./result.js";
import type { Result } from "../../common/result.js";

/*
 * kube-proxy's health server (pkg/proxy/healthcheck/proxy_health.go). Two shapes, both on 200 and 503:
 * - v1.33+: json.Marshal(ProxyHealth) — {"lastUpdated","currentTime","nodeEligible"?,"healthy",
 *   "status"?:{"IPv4":{"lastUpdated","healthy"}}} with RFC 3339 times; /livez omits nodeEligible.
 * - older: fmt.Fprintf(`{"lastUpdated": %q,"currentTime": %q, "nodeEligible": %v}`) with Go's
 *   time.Time.String() ("2024-05-01 12:00:00.1 +0000 UTC m=+3.2").
 * `healthy` is the proxier's health only; /healthz answers 503 when the proxier is unhealthy OR the
 * node is not eligible (deleted, or tainted ToBeDeletedByClusterAutoscaler). So 503 with
 * healthy:true means "node being removed", not a broken proxier.
 */
export function parseKubeProxyHealth(status: number, body: string): Result<KubeProxyHealthFacts> {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return unparsable(`health answer is not JSON: ${excerpt(body)}`);
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    return unparsable(`health answer is not a JSON object: ${excerpt(body)}`);
  }
  const o = json as Record<string, unknown>;
  const str = (k: string) => (typeof o[k] === "string" ? (o[k] as string) : null);
  const nodeEligible = typeof o.nodeEligible === "boolean" ? o.nodeEligible : null;
  const lastUpdated = str("lastUpdated");
  const currentTime = str("currentTime");
  if (typeof o.healthy === "boolean") {
    return parsed({ status, shape: "v1.33+", healthy: o.healthy, lastUpdated, currentTime, nodeEligible });
  }
  if (lastUpdated !== null && currentTime !== null) {
    // The old body has no proxier verdict of its own: 200 means healthy; a 503 on an eligible node
    // means an unhealthy proxier; a 503 on an ineligible node says nothing about the proxier.
    const healthy = status === 200 ? true : nodeEligible === false ? null : false;
    return parsed({ status, shape: "legacy", healthy, lastUpdated, currentTime, nodeEligible });
  }
  return parsed({ status, shape: "unknown", healthy: null, lastUpdated, currentTime, nodeEligible });
}
