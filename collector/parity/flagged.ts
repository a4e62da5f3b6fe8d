import type { ClusterFacts } from "../report/cluster-facts.js";
import type { NodeParity } from "./schema.js";
import { serviceHolding, servicePortName } from "./name.js";

/** The Services whose EndpointSlices the collector must read: those holding a lost entry, or differing. */
export function flaggedServices(
  observations: readonly { outcome: string; parity?: NodeParity | null }[],
  cluster: ClusterFacts | null,
): { namespace: string; name: string }[] {
  if (cluster === null) return [];
  const out = new Map<string, { namespace: string; name: string }>();
  const add = (namespace: string, name: string) => out.set(`${namespace}/${name}`, { namespace, name });
  for (const o of observations) {
    if (o.outcome !== "ok" || !o.parity) continue;
    for (const e of o.parity.lost) {
      const h = serviceHolding(e, cluster.services);
      if (h) add(h.svc.namespace, h.svc.name);
    }
    for (const d of o.parity.differ ?? []) {
      const s = servicePortName(d.service);
      if (s && cluster.services.some((x) => x.namespace === s.namespace && x.name === s.name))
        add(s.namespace, s.name);
    }
  }
  return [...out.values()];
}
