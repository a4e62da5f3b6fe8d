import {
  CoreV1Api,
  type ConfigurationOptions,
  type KubeConfig,
  type V1Service,
} from "@kubernetes/client-node";
import type { Result } from "../../../common/result.js";
import type { ApiService } from "../../report/cluster-facts.js";
import { deadline } from "./deadline.js";
import { describe } from "./errors.js";
import { listAll, PAGE } from "./paging.js";

/** Every Service in every namespace, a page at a time. */
export const listServices = (core: CoreV1Api, o: ConfigurationOptions): Promise<V1Service[]> =>
  listAll((cont) => core.listServiceForAllNamespaces({ limit: PAGE, _continue: cont }, o));

export function toApiService(s: V1Service): ApiService {
  return {
    namespace: s.metadata?.namespace ?? "",
    name: s.metadata?.name ?? "",
    type: s.spec?.type ?? "ClusterIP",
    clusterIPs: s.spec?.clusterIPs ?? (s.spec?.clusterIP ? [s.spec.clusterIP] : []),
    ports: (s.spec?.ports ?? []).flatMap((p) =>
      p
        ? [
            {
              name: p.name ?? null,
              protocol: p.protocol ?? "TCP",
              port: p.port,
              nodePort: p.nodePort ?? null,
            },
          ]
        : [],
    ),
    sessionAffinity: s.spec?.sessionAffinity ?? null,
    internalTrafficPolicy: s.spec?.internalTrafficPolicy ?? null,
    externalTrafficPolicy: s.spec?.externalTrafficPolicy ?? null,
    externalIPs: (s.spec?.externalIPs ?? []).filter((a) => typeof a === "string"),
    loadBalancerIPs: (s.status?.loadBalancer?.ingress ?? []).flatMap((i) =>
      typeof i?.ip === "string" ? [i.ip] : [],
    ),
    healthCheckNodePort: s.spec?.healthCheckNodePort ?? null,
  };
}

/** One Service's cluster IP and ports, for lc-audit. */
export async function readService(
  kc: KubeConfig,
  namespace: string,
  name: string,
  timeoutMs: number,
): Promise<Result<ApiService>> {
  try {
    const s = await kc
      .makeApiClient(CoreV1Api)
      .readNamespacedService({ name, namespace }, deadline(timeoutMs));
    return { ok: true, value: toApiService(s) };
  } catch (e) {
    return { ok: false, error: `cannot read service ${namespace}/${name}: ${describe(e)}` };
  }
}
