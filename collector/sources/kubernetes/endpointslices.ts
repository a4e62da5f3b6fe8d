import { ApiException, DiscoveryV1Api, type KubeConfig, type V1EndpointSlice } from "@kubernetes/client-node";
import type { ApiEndpointSlice, SliceReads } from "../../report/cluster-facts.js";
import { deadline } from "./deadline.js";
import { describe } from "./errors.js";
import { listAll, PAGE } from "./paging.js";

/** The label every EndpointSlice of a Service carries (discovery.k8s.io/v1 LabelServiceName). */
const SERVICE_NAME_LABEL = "kubernetes.io/service-name";

const bool = (v: unknown, dflt: boolean) => (typeof v === "boolean" ? v : dflt);
const names = (xs: unknown): string[] | null =>
  Array.isArray(xs)
    ? xs.flatMap((x) =>
        typeof (x as { name?: unknown })?.name === "string" ? [(x as { name: string }).name] : [],
      )
    : null;

/** An EndpointSlice reduced to what parity reads; null for one that names no Service. */
function toApiEndpointSlice(s: V1EndpointSlice): ApiEndpointSlice | null {
  const service = s.metadata?.labels?.[SERVICE_NAME_LABEL];
  if (typeof service !== "string" || typeof s.metadata?.namespace !== "string") return null;
  return {
    namespace: s.metadata.namespace,
    service,
    addressType: typeof s.addressType === "string" ? s.addressType : "",
    endpoints: (s.endpoints ?? []).flatMap((e) => {
      const address = e?.addresses?.[0];
      if (typeof address !== "string") return [];
      const c = e.conditions;
      // types.go: ready and serving nil mean true, terminating nil means false.
      return [
        {
          address,
          ready: bool(c?.ready, true),
          serving: bool(c?.serving, true),
          terminating: bool(c?.terminating, false),
          nodeName: typeof e.nodeName === "string" ? e.nodeName : null,
          forZones: names(e.hints?.forZones),
          forNodes: names(e.hints?.forNodes),
        },
      ];
    }),
    ports: (s.ports ?? []).flatMap((p) =>
      p
        ? [
            {
              name: typeof p.name === "string" ? p.name : "",
              protocol: typeof p.protocol === "string" ? p.protocol : "TCP",
              port: typeof p.port === "number" ? p.port : null,
            },
          ]
        : [],
    ),
  };
}

/**
 * Names per set-based selector (`kubernetes.io/service-name in (a,b,...)`): 50 names of at most 63
 * characters keep the query under 4 KB.
 */
const SLICE_NAMES_PER_LIST = 50;
/**
 * Past this many flagged Service names, one paged list of every EndpointSlice costs fewer requests
 * than the selectors would (10,000 Services: ~10,000 slices in ~20 pages of 500, against 200 lists).
 */
const SLICE_SELECTED_MAX = 500;

/** The API server's own words for a failed read, and the permission a 403 lacks. */
function sliceFailure(e: unknown): string {
  let said = describe(e);
  if (e instanceof ApiException) {
    try {
      const b = typeof e.body === "string" ? JSON.parse(e.body) : e.body;
      if (typeof b?.message === "string") said = `HTTP ${e.code}: ${b.message.slice(0, 300)}`;
    } catch {
      // not JSON: describe()'s words stand
    }
    if (e.code === 403)
      return `${said} (needs RBAC: list on endpointslices in API group discovery.k8s.io, cluster-wide, which the ClusterRole proxyscope-collector in manifests/core/collector-rbac.yaml grants; from a laptop: kubectl create clusterrolebinding proxyscope-laptop-YOU --clusterrole=proxyscope-collector --user=YOU; docs/cli.md)`;
  }
  return said;
}

/** One list to make: the Service names its selector covers, or every slice (`names` null). */
interface SliceList {
  names: Set<string> | null;
  labelSelector?: string;
}

/** One paged list of all, or set-based selectors over the flagged names: whichever asks less. */
function sliceLists(unique: readonly string[]): SliceList[] {
  if (unique.length > SLICE_SELECTED_MAX) return [{ names: null }];
  return Array.from({ length: Math.ceil(unique.length / SLICE_NAMES_PER_LIST) }, (_, i) => {
    const part = unique.slice(i * SLICE_NAMES_PER_LIST, (i + 1) * SLICE_NAMES_PER_LIST);
    return { names: new Set(part), labelSelector: `${SERVICE_NAME_LABEL} in (${part.join(",")})` };
  });
}

class DeadlinePassed extends Error {}

type SliceRead = { ok: true; slices: ApiEndpointSlice[] } | { ok: false; reason: string };

/**
 * The current EndpointSlices of these Services, read within what is left of the gather's deadline
 * (`leftMs`). Every Service asked gets an entry: its slices, or why they were not read. Never throws.
 */
export async function readEndpointSlices(
  kc: KubeConfig,
  wanted: readonly { namespace: string; name: string }[],
  opts: { timeoutMs: number; leftMs: () => number },
): Promise<SliceReads> {
  const out = new Map<string, SliceRead>();
  if (wanted.length === 0) return out;
  const keys = new Set(wanted.map((w) => `${w.namespace}/${w.name}`));
  const api = kc.makeApiClient(DiscoveryV1Api);
  const found = new Map<string, ApiEndpointSlice[]>();
  const failed = new Map<string, string>();
  for (const { names, labelSelector } of sliceLists([...new Set(wanted.map((w) => w.name))].sort())) {
    try {
      await listAll(async (cont) => {
        const left = opts.leftMs();
        if (left <= 0) throw new DeadlinePassed();
        const page = await api.listEndpointSliceForAllNamespaces(
          { limit: PAGE, _continue: cont, ...(labelSelector ? { labelSelector } : {}) },
          deadline(Math.min(opts.timeoutMs, left)),
        );
        // Only the flagged Services' slices are kept: a page is bounded, the whole list never held.
        for (const item of page.items) {
          const sl = toApiEndpointSlice(item);
          if (sl === null || !keys.has(`${sl.namespace}/${sl.service}`)) continue;
          const k = `${sl.namespace}/${sl.service}`;
          found.set(k, [...(found.get(k) ?? []), sl]);
        }
        return { items: [], metadata: page.metadata };
      });
    } catch (e) {
      const reason =
        e instanceof DeadlinePassed ? "the gather's deadline passed before they were read" : sliceFailure(e);
      for (const w of wanted)
        if (names === null || names.has(w.name)) failed.set(`${w.namespace}/${w.name}`, reason);
    }
  }
  for (const k of keys) {
    const why = failed.get(k);
    out.set(k, why !== undefined ? { ok: false, reason: why } : { ok: true, slices: found.get(k) ?? [] });
  }
  return out;
}
