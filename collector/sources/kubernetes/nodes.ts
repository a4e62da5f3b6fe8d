import type { ConfigurationOptions, CoreV1Api, V1Node } from "@kubernetes/client-node";
import type { ApiNode } from "../../report/cluster-facts.js";
import { listAll, PAGE } from "./paging.js";

/** Every node, a page at a time: the one read a report cannot do without. */
export const listNodes = (core: CoreV1Api, o: ConfigurationOptions): Promise<V1Node[]> =>
  listAll((cont) => core.listNode({ limit: PAGE, _continue: cont }, o));

export function toApiNode(n: V1Node): ApiNode {
  const info = n.status?.nodeInfo;
  const ready = n.status?.conditions?.find((c) => c?.type === "Ready");
  return {
    name: n.metadata?.name ?? "",
    kubeletVersion: info?.kubeletVersion ?? null,
    kernelVersion: info?.kernelVersion ?? null,
    osImage: info?.osImage ?? null,
    addresses: (n.status?.addresses ?? []).flatMap((a) => (a ? [{ type: a.type, address: a.address }] : [])),
    labels: { ...(n.metadata?.labels ?? {}) },
    ready: ready ? ready.status === "True" : null,
    unschedulable: n.spec?.unschedulable === true,
    providerID: n.spec?.providerID ?? null,
  };
}
