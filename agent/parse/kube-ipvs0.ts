import { z } from "zod";
import type { KubeIpvs0Facts } from "../facts/ipvs.js";
import { excerpt, parsed, unparsable } from "./result.js";
import { parseBoundedJson } from "../../common/bounded-json.js";
import { LISTING_JSON_BOUNDS } from "./listing-bounds.js";
import type { Result } from "../../common/result.js";

// `ip -j -d addr show dev kube-ipvs0` prints an array with the one link. Only the fields we use are
// checked; iproute2 adds fields between versions and those are ignored.
const AddrInfo = z.object({
  family: z.string(),
  local: z.string(),
  prefixlen: z.number().int(),
});
const Link = z.object({
  ifname: z.string(),
  flags: z.array(z.string()),
  operstate: z.string(),
  linkinfo: z.object({ info_kind: z.string().optional() }).optional(),
  addr_info: z.array(AddrInfo),
});

/** The link as kube-proxy's ipvs mode leaves it: a dummy, usually DOWN, with every Service IP as /32 or /128. */
export function parseKubeIpvs0Json(text: string, device = "kube-ipvs0"): Result<KubeIpvs0Facts> {
  const json = jsonOf(text);
  return json.ok ? fromLinks(json.value, device) : json;
}

/** No such link: an answer, not a failure. */
export const kubeIpvs0Absent = (): KubeIpvs0Facts => ({
  present: false,
  kind: null,
  operState: null,
  flags: [],
  addresses: [],
});

/**
 * The same facts taken from `ip -j -d addr show` of every link (the addresses probe's read): the
 * device's entry is what `... dev <device>` prints, and a listing without it means no such link.
 */
export function kubeIpvs0FromAddrListing(text: string, device = "kube-ipvs0"): Result<KubeIpvs0Facts> {
  const json = jsonOf(text);
  return json.ok ? kubeIpvs0FromAddrDoc(json.value, device) : json;
}

/** The same from the listing's document, when the addresses probe has parsed it already (once, not twice). */
export function kubeIpvs0FromAddrDoc(doc: unknown, device = "kube-ipvs0"): Result<KubeIpvs0Facts> {
  if (!Array.isArray(doc)) return unparsable("ip -j printed something that is not a list of links");
  const mine = doc.filter(
    (l: unknown) => typeof l === "object" && l !== null && (l as { ifname?: unknown }).ifname === device,
  );
  return mine.length === 0 ? parsed(kubeIpvs0Absent()) : fromLinks(mine, device);
}

function jsonOf(text: string): Result<unknown> {
  const read = parseBoundedJson(text, LISTING_JSON_BOUNDS);
  if (read.ok) return parsed(read.doc);
  return unparsable(
    read.kind === "not-json"
      ? `ip -j printed something that is not JSON: ${excerpt(text)}`
      : `ip -j printed a listing too large to parse: ${read.message}`,
  );
}

function fromLinks(json: unknown, device: string): Result<KubeIpvs0Facts> {
  const links = z.array(Link).safeParse(json);
  if (!links.success) {
    return unparsable(`ip -j printed an unexpected shape: ${links.error.issues[0]?.message ?? ""}`);
  }
  if (links.data.length !== 1 || links.data[0]!.ifname !== device) {
    return unparsable(`ip -j printed ${links.data.length} links, expected ${device} alone`);
  }
  const link = links.data[0]!;
  return parsed({
    present: true,
    kind: link.linkinfo?.info_kind ?? null,
    operState: link.operstate,
    flags: link.flags,
    addresses: link.addr_info.flatMap((a) =>
      a.family === "inet" || a.family === "inet6"
        ? [{ family: a.family, address: a.local, prefixLen: a.prefixlen }]
        : [],
    ),
  });
}
