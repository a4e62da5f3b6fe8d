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
const Link = z.looseObject({
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

export function parseJsonArray<T>(text: string, item: z.ZodType<T>, what: string): Result<T[]> {
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
  const r = z.array(item).safeParse(read.doc);
  if (!r.success) return unparsable(`${what} has an unexpected shape: ${r.error.issues[0]?.message ?? ""}`);
  return parsed(r.data);
}

/** Parses `ip -j -d addr show`: every link with its kind, state and inet/inet6 addresses. */
export function parseIpAddrJson(text: string): Result<Interface[]> {
  const r = parseJsonArray(text, Link, "ip -j -d addr show");
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
