import { isKubeProxyTable, isKubeProxyTableFamily } from "../facts/kube-proxy-table.js";
import { canonicalIp } from "./ip-text.js";
import { nftItems } from "./nft-json.js";
import { excerpt, parsed, unparsable } from "./result.js";
import type { Result } from "../../common/result.js";

// What kube-proxy's nftables tables serve, per Service port, read off names alone (no rule listing):
// the service-ips / service-nodeports map elements say which chain each address or NodePort goes to,
// and the chains' names carry the Service. kubernetes/kubernetes pkg/proxy/nftables/proxier.go
// (servicePortChainNameBase, servicePortEndpointChainNameBase, hashAndTruncate):
//   service-HASH8-ns/svc/proto/portName, external-HASH8-..., local-HASH8-..., firewall-HASH8-...
//   endpoint-HASH8-ns/svc/proto/portName__endpointIP/endpointPort   (IPv6 ":" written as ".")
// a name over 240 characters is cut and ends "...". Services without endpoints sit in
// no-endpoint-services / no-endpoint-nodeports instead, with the ServicePortName as element comment.

type Proto = "TCP" | "UDP" | "SCTP";

export interface NftServed {
  /** "TCP 10.96.0.10:53" / "TCP [fd00::a]:53" -> ServicePortName ("ns/svc:port") or null when unnamed. */
  ips: Map<string, string | null>;
  /** "TCP:30080" -> ServicePortName or null. */
  nodePorts: Map<string, string | null>;
  /** "ns/svc:port TCP" -> endpoints ("10.244.1.5:8080", "[fd00::5]:8080"). */
  endpoints: Map<string, Set<string>>;
  /** Endpoint chains whose name was cut (kube-proxy's hashAndTruncate): their address is unknown. */
  truncatedEndpointChains: number;
  /** Families ("ip", "ip6") in which kube-proxy's table holds a chain. */
  families: Set<string>;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

const CHAIN =
  /^(?:service|external|local|firewall)-[A-Z2-7]{8}-([a-z0-9.-]+)\/([a-z0-9.-]+)\/(tcp|udp|sctp)\/([a-z0-9-]*)$/;
const ENDPOINT =
  /^endpoint-[A-Z2-7]{8}-([a-z0-9.-]+)\/([a-z0-9.-]+)\/(tcp|udp|sctp)\/([a-z0-9-]*)__([0-9A-Za-z.]+)\/(\d{1,5})$/;

/** kube-proxy's ServicePortName.String(): "ns/svc:port", or "ns/svc" for an unnamed port. */
const portName = (ns: string, svc: string, port: string) => `${ns}/${svc}${port === "" ? "" : `:${port}`}`;

/** The Service of a chain kube-proxy's maps point at, with its protocol; null for any other chain. */
export function serviceOfChain(name: string): { service: string; protocol: Proto } | null {
  const m = CHAIN.exec(name);
  if (!m) return null;
  return { service: portName(m[1]!, m[2]!, m[4]!), protocol: m[3]!.toUpperCase() as Proto };
}

/** "ip:port" in the form the IPVS snapshot uses ("[v6]:port"). */
export function endpointText(address: string, port: number): string | null {
  const ip = canonicalIp(address);
  if (ip === null) return null;
  return ip.includes(":") ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/** An endpoint chain's Service and endpoint; "truncated" for a cut name; null for any other chain. */
export function endpointOfChain(name: string): { key: string; endpoint: string } | "truncated" | null {
  if (!name.startsWith("endpoint-")) return null;
  if (name.endsWith("...")) return "truncated";
  const m = ENDPOINT.exec(name);
  if (!m) return null;
  const raw = m[5]!;
  // An IPv4 address keeps its dots; anything else is IPv6 with ":" written as ".".
  const address = /^\d{1,3}(\.\d{1,3}){3}$/.test(raw) ? raw : raw.replaceAll(".", ":");
  const endpoint = endpointText(address, Number(m[6]));
  if (endpoint === null) return null;
  return { key: `${portName(m[1]!, m[2]!, m[4]!)} ${m[3]!.toUpperCase()}`, endpoint };
}

const PROTOS = new Set(["tcp", "udp", "sctp"]);

/** key, comment and verdict target of one map element, from libnftables JSON. */
function element(e: unknown): { key: unknown[]; comment: string | null; target: string | null } | null {
  if (!Array.isArray(e) || e.length !== 2) return null;
  let k = e[0];
  let comment: string | null = null;
  if (isObj(k) && isObj(k.elem)) {
    comment = typeof k.elem.comment === "string" ? k.elem.comment : null;
    k = k.elem.val;
  }
  if (!isObj(k) || !Array.isArray(k.concat)) return null;
  const v = e[1];
  let target: string | null = null;
  if (isObj(v)) {
    const jump = isObj(v.goto) ? v.goto : isObj(v.jump) ? v.jump : null;
    if (jump && typeof jump.target === "string") target = jump.target;
  }
  return { key: k.concat, comment, target };
}

function ipKey(key: unknown[]): { key: string; protocol: Proto } | null {
  const [addr, proto, port] = key;
  if (key.length !== 3 || typeof addr !== "string" || typeof proto !== "string" || !PROTOS.has(proto))
    return null;
  if (typeof port !== "number" || !Number.isInteger(port)) return null;
  const ep = endpointText(addr, port);
  if (ep === null) return null;
  const p = proto.toUpperCase() as Proto;
  return { key: `${p} ${ep}`, protocol: p };
}

function nodePortKey(key: unknown[]): { key: string; protocol: Proto } | null {
  const [proto, port] = key;
  if (key.length !== 2 || typeof proto !== "string" || !PROTOS.has(proto)) return null;
  if (typeof port !== "number" || !Number.isInteger(port)) return null;
  const p = proto.toUpperCase() as Proto;
  return { key: `${p}:${port}`, protocol: p };
}

/** "ns/svc:port" from a no-endpoint element's comment (kube-proxy writes svcPortNameString there). */
function commentName(c: string | null): string | null {
  return c !== null && /^[a-z0-9.-]+\/[a-z0-9.-]+(:[a-z0-9-]+)?$/.test(c) ? c : null;
}

export function emptyServed(): NftServed {
  return { ips: new Map(), nodePorts: new Map(), ...chainServed() };
}

/**
 * Adds `nft -j list maps <family>` (kube-proxy's table only) to `into`. A map element that cannot be
 * read fails the whole parse: a Service silently dropped here would be reported lost.
 */
export function addNftMaps(into: NftServed, text: string, table: string): Result<NftServed> {
  const r = nftItems(text, "nft -j list maps");
  if (!r.ok) return r;
  for (const it of r.value) {
    const m = it.map;
    if (!isObj(m) || !isKubeProxyTable({ family: m.family, name: m.table }, table)) continue;
    const name = m.name;
    const isIps = name === "service-ips" || name === "no-endpoint-services";
    const isPorts = name === "service-nodeports" || name === "no-endpoint-nodeports";
    if (!isIps && !isPorts) continue;
    if (m.elem === undefined) continue; // nft 1.0.6 prints no "elem" for an empty map
    if (!Array.isArray(m.elem))
      return unparsable(`nft -j list maps: "elem" of ${String(name)} is not a list`);
    for (const e of m.elem) {
      const el = element(e);
      const k = el === null ? null : isIps ? ipKey(el.key) : nodePortKey(el.key);
      if (el === null || k === null) {
        return unparsable(
          `nft -j list maps: element of ${String(name)} not understood: ${excerpt(JSON.stringify(e))}`,
        );
      }
      const chain = el.target === null ? null : serviceOfChain(el.target);
      const svc = chain !== null ? `${chain.service}` : commentName(el.comment);
      const dest = isIps ? into.ips : into.nodePorts;
      if (!dest.has(k.key) || dest.get(k.key) === null) dest.set(k.key, svc);
    }
  }
  return parsed(into);
}

/** Adds `nft -j list chains <family>` (kube-proxy's table only): the endpoints behind each Service port. */
export function addNftChains(into: NftServed, text: string, table: string): Result<NftServed> {
  const r = nftItems(text, "nft -j list chains");
  if (!r.ok) return r;
  const chains: { family: unknown; table: unknown; name: unknown }[] = [];
  for (const it of r.value) if (isObj(it.chain)) chains.push(it.chain as Obj & (typeof chains)[number]);
  return parsed(addChains(into, chains, table));
}

/** What parity takes from kube-proxy's chains: the endpoints behind each Service port, the families. */
export type NftChainServed = Pick<NftServed, "endpoints" | "truncatedEndpointChains" | "families">;

export function chainServed(): NftChainServed {
  return { endpoints: new Map(), truncatedEndpointChains: 0, families: new Set() };
}

/**
 * Adds one chain of a listing (kube-proxy's table only). The nftables probe calls it as it reads the
 * chain listing, so parity keeps these endpoints (~10 per Service) rather than every chain object.
 */
export function addChain(
  into: NftChainServed,
  c: { family: unknown; table: unknown; name: unknown },
  table: string,
): void {
  if (c.table !== table || typeof c.name !== "string") return;
  if (isKubeProxyTableFamily(c.family)) into.families.add(c.family);
  const ep = endpointOfChain(c.name);
  if (ep === null) return;
  if (ep === "truncated") {
    into.truncatedEndpointChains++;
    return;
  }
  const set = into.endpoints.get(ep.key) ?? new Set<string>();
  set.add(ep.endpoint);
  into.endpoints.set(ep.key, set);
}

/** The same for a listing already parsed. */
export function addChains<T extends NftChainServed>(
  into: T,
  chains: readonly { family: unknown; table: unknown; name: unknown }[],
  table: string,
): T {
  for (const c of chains) addChain(into, c, table);
  return into;
}

/** A scan's served, starting from chains read earlier (copied: a kept read is never written to). */
export function servedFrom(chains: NftChainServed): NftServed {
  return {
    ...emptyServed(),
    endpoints: new Map(chains.endpoints),
    truncatedEndpointChains: chains.truncatedEndpointChains,
    families: new Set(chains.families),
  };
}
