import { z } from "zod";
import type { KubeIpvs0Facts } from "../facts/ipvs.js";
import { excerpt, parsed, unparsable, type Parsed } from "./result.js";

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
export function parseKubeIpvs0Json(text: string, device = "kube-ipvs0"): Parsed<KubeIpvs0Facts> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return unparsable(`ip -j printed something that is not JSON: ${excerpt(text)}`);
  }
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
