import { z } from "zod";
import type { AddressesFacts, InterfaceAddress } from "../facts/host.js";
import { parseBoundedJson } from "../../common/bounded-json.js";
import { LISTING_JSON_BOUNDS } from "./listing-bounds.js";
import { excerpt, parsed, unparsable } from "./result.js";
import type { Result } from "../../common/result.js";

export type Interface = AddressesFacts["interfaces"][number];

// Only the fields we read; iproute2 adds fields between releases and passthrough keeps us tolerant.
const AddrInfo = z.looseObject({
  family: z.string(),
  local: z.string().optional(),
  prefixlen: z.number().int().optional(),
  scope: z.string().optional(),
});
export const Link = z.looseObject({
  ifname: z.string(),
  operstate: z.string().optional(),
  linkinfo: z.looseObject({ info_kind: z.string().optional() }).optional(),
  addr_info: z.array(AddrInfo).optional(),
});
const Route = z.looseObject({
  dst: z.string(),
  gateway: z.string().optional(),
  dev: z.string().optional(),
  prefsrc: z.string().optional(),
  metric: z.number().optional(),
});
type Route = z.infer<typeof Route>;

/**
 * What `z.array(Link)` accepts, checked by hand: kube-ipvs0 carries one addr_info object per Service IP
 * (10,000), and zod's looseObject copies each of them, every key, to return it (a tenth of a one-shot scan
 * on a 10,000-Service node). When this says yes the document is returned as it is; when it says no, zod
 * parses it anyway and names what is wrong, so the answers and the messages stay zod's.
 */
export function isLinkArray(doc: unknown): doc is z.infer<typeof Link>[] {
  if (!Array.isArray(doc)) return false;
  const obj = (v: unknown): v is Record<string, unknown> =>
    typeof v === "object" && v !== null && !Array.isArray(v);
  const optString = (v: unknown) => v === undefined || typeof v === "string";
  for (const l of doc) {
    if (!obj(l) || typeof l.ifname !== "string" || !optString(l.operstate)) return false;
    if (l.linkinfo !== undefined && !(obj(l.linkinfo) && optString(l.linkinfo.info_kind))) return false;
    if (l.addr_info === undefined) continue;
    if (!Array.isArray(l.addr_info)) return false;
    for (const a of l.addr_info as unknown[]) {
      if (!obj(a) || typeof a.family !== "string" || !optString(a.local) || !optString(a.scope)) return false;
      if (a.prefixlen !== undefined && !Number.isSafeInteger(a.prefixlen)) return false;
    }
  }
  return true;
}

export function parseJsonArray<T>(
  text: string,
  item: z.ZodType<T>,
  what: string,
  fastCheck?: (doc: unknown) => doc is T[],
): Result<T[]> {
  const doc = jsonArrayDoc(text, what);
  return doc.ok ? arrayOf(doc.value, item, what, fastCheck) : doc;
}

/** The document of an `ip -j` listing, bounded; [] for the nothing some releases print for an empty one. */
export function jsonArrayDoc(text: string, what: string): Result<unknown> {
  // `ip -j` prints nothing at all (not "[]") for an empty route table on some iproute2 releases.
  if (text.trim() === "") return parsed([]);
  // Counted before parsing: a few MB of small objects is a parse of hundreds of MB (listing-bounds.ts).
  const read = parseBoundedJson(text, LISTING_JSON_BOUNDS);
  if (!read.ok)
    return unparsable(
      read.kind === "not-json"
        ? `${what} is not JSON: ${excerpt(text)}`
        : `${what} is too large to parse: ${read.message}`,
    );
  return parsed(read.doc);
}

function arrayOf<T>(
  doc: unknown,
  item: z.ZodType<T>,
  what: string,
  fastCheck?: (doc: unknown) => doc is T[],
): Result<T[]> {
  if (fastCheck?.(doc)) return parsed(doc);
  const r = z.array(item).safeParse(doc);
  if (!r.success) return unparsable(`${what} has an unexpected shape: ${r.error.issues[0]?.message ?? ""}`);
  return parsed(r.data);
}

/** Parses `ip -j -d addr show`: every link with its kind, state and inet/inet6 addresses. */
export function parseIpAddrJson(text: string): Result<Interface[]> {
  const doc = jsonArrayDoc(text, ADDR);
  return doc.ok ? ipAddrInterfaces(doc.value) : doc;
}

const ADDR = "ip -j -d addr show";

/** parseIpAddrJson of a listing already parsed (jsonArrayDoc): the addresses probe parses it once. */
export function ipAddrInterfaces(doc: unknown): Result<Interface[]> {
  const r = arrayOf(doc, Link, ADDR, isLinkArray);
  if (!r.ok) return r;
  return parsed(
    r.value.map((l) => ({
      name: l.ifname,
      kind: l.linkinfo?.info_kind ?? null,
      operState: l.operstate ?? "UNKNOWN",
      addresses: (l.addr_info ?? []).flatMap((a): InterfaceAddress[] =>
        (a.family === "inet" || a.family === "inet6") && a.local !== undefined && a.prefixlen !== undefined
          ? [{ family: a.family, address: a.local, prefixLen: a.prefixlen, scope: a.scope ?? "global" }]
          : [],
      ),
    })),
  );
}

/** Parses `ip -j route show default` (or `ip -j -6 ...`). */
export function parseIpRouteJson(text: string): Result<Route[]> {
  return parseJsonArray(text, Route, "ip -j route show default");
}

/**
 * The address the kernel would pick for traffic on the default route: the route's preferred source,
 * else the first global address of that family on the route's device. Lowest metric wins.
 */
export function defaultRouteSource(
  routes: readonly Route[],
  interfaces: readonly Interface[],
  family: "inet" | "inet6",
): string | null {
  const sorted = routes.filter((r) => r.dst === "default").sort((a, b) => (a.metric ?? 0) - (b.metric ?? 0));
  for (const route of sorted) {
    if (route.prefsrc) return route.prefsrc;
    const dev = interfaces.find((i) => i.name === route.dev);
    const addr = dev?.addresses.find((a) => a.family === family && a.scope === "global");
    if (addr) return addr.address;
  }
  return null;
}
