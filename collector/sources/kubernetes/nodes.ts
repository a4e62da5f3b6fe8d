import { ApiException, type KubeConfig } from "@kubernetes/client-node";
import type { ApiNode } from "../../report/cluster-facts.js";
import { apiGetter } from "./agent-access.js";
import { ReadFailed } from "./errors.js";
import { stringLabels } from "./fields.js";
import { listAll, PAGE } from "./paging.js";

/** A page of the node list above this is refused, named: V8 holds no string much past 512 MiB. */
const MAX_PAGE_BYTES = 256 * 2 ** 20;

/**
 * Every node, a page at a time: the one read a report cannot do without. Each page is read as JSON and
 * only the fields toApiNode takes are looked at: the client's generated deserializer walked every field
 * of every Node (images, conditions, managedFields) through its type tables, 1.5 s of a 50,000-node
 * report's CPU. The same credentials, per-call deadline and `limit`/`continue` paging as the client's
 * listNode; its failures read as describe() reads the client's (`HTTP 403: <Status message>`, `timed out`).
 */
export async function listNodes(kc: KubeConfig, timeoutMs: number): Promise<ApiNode[]> {
  const get = apiGetter(kc);
  const server = (kc.getCurrentCluster()?.server ?? "").replace(/\/+$/, "");
  return listAll(async (cont) => {
    const q = new URLSearchParams({ limit: String(PAGE), ...(cont ? { continue: cont } : {}) });
    const r = await get(`${server}/api/v1/nodes?${q}`, { timeoutMs, maxBytes: MAX_PAGE_BYTES });
    if (!r.ok)
      // The URL and the reason ("…/api/v1/nodes?limit=500: ECONNREFUSED"), as the client's message had them.
      throw new ReadFailed(r.error.kind === "timeout" ? "timed out" : r.error.message);
    // As the client answers a status: a 401 without its body, any other with its metav1.Status.
    if (r.status < 200 || r.status > 299)
      throw new ApiException(r.status, "list nodes", r.status === 401 ? undefined : r.body, {});
    return nodePage(r.body);
  });
}

/** Pure: one page of a NodeList, its items as the report holds them, or a named refusal. */
export function nodePage(body: string): { items: ApiNode[]; metadata: { _continue?: string } } {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    throw new ReadFailed("the node list is not JSON");
  }
  const d = doc as { items?: unknown; metadata?: { continue?: unknown } | null } | null;
  if (typeof d !== "object" || d === null || !Array.isArray(d.items))
    throw new ReadFailed("the node list has no items array");
  const items = d.items.map((n: unknown, i) => {
    if (typeof n !== "object" || n === null || Array.isArray(n))
      throw new ReadFailed(`the node list's item ${i} is not an object`);
    return toApiNode(n);
  });
  const cont = d.metadata?.continue;
  return { items, metadata: typeof cont === "string" && cont !== "" ? { _continue: cont } : {} };
}

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
const obj = (v: unknown): Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/**
 * A Node as the API server sent it (JSON, nothing checked yet), reduced to what the report holds: a
 * field of the wrong type reads as absent, never a throw and never a value outside ApiNode's schema.
 */
export function toApiNode(raw: unknown): ApiNode {
  const n = obj(raw);
  const meta = obj(n.metadata);
  const status = obj(n.status);
  const spec = obj(n.spec);
  const info = obj(status.nodeInfo);
  const ready = arr(status.conditions)
    .map(obj)
    .find((c) => c.type === "Ready");
  return {
    name: str(meta.name) ?? "",
    kubeletVersion: str(info.kubeletVersion),
    kernelVersion: str(info.kernelVersion),
    osImage: str(info.osImage),
    addresses: arr(status.addresses)
      .map(obj)
      .flatMap((a) =>
        typeof a.type === "string" && typeof a.address === "string"
          ? [{ type: a.type, address: a.address }]
          : [],
      ),
    labels: stringLabels(meta.labels),
    ready: ready ? ready.status === "True" : null,
    unschedulable: spec.unschedulable === true,
    providerID: str(spec.providerID),
  };
}
