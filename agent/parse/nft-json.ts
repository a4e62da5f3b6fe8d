import { NftFamily } from "../facts/netfilter.js";
import { eachNftItem } from "./nft-json-items.js";
import { clip, excerpt, parsed, unparsable } from "./result.js";
import type { Result } from "../../common/result.js";

// Parsers for `nft -j list tables|chains|sets|maps|set|map` (libnftables JSON, schema version 1:
// {"nftables": [{"metainfo": ...}, {"table": {...}}, ...]}).

export type Family = ReturnType<typeof NftFamily.parse>;

export interface NftTable {
  family: Family;
  name: string;
}
export interface NftChain {
  family: Family;
  table: string;
  name: string;
  /** Present on base chains only. */
  hook?: string;
  policy?: string;
}
export interface NftSet {
  family: Family;
  table: string;
  name: string;
  kind: "set" | "map";
  /** "ipv4_addr", or the concatenation "ipv4_addr . inet_proto . inet_service". */
  type: string;
  /** nft 1.0.6 prints no "elem" key for an empty set; it lists elements with every set/map. */
  elements: number;
  /** For kube-proxy's NodePort maps (keyed inet_proto . inet_service): "TCP:30080" per element. */
  nodePorts?: string[];
  /** For kube-proxy's `nodeport-ips` set: its addresses. */
  addresses?: string[];
}

// kube-proxy's maps whose keys are NodePorts (pkg/proxy/nftables/proxier.go: serviceNodePortsMap,
// noEndpointNodePortsMap), each element keyed {"concat": [proto, port]} (with a comment, wrapped in
// {"elem": {"val": ...}}).
const NODEPORT_MAPS = new Set(["service-nodeports", "no-endpoint-nodeports"]);

function nodePortOf(e: unknown): string | null {
  const key = Array.isArray(e) ? e[0] : e;
  const val = isObj(key) && isObj(key.elem) ? key.elem.val : key;
  if (!isObj(val) || !Array.isArray(val.concat) || val.concat.length !== 2) return null;
  const [proto, port] = val.concat;
  if (typeof proto !== "string" || typeof port !== "number" || !Number.isInteger(port)) return null;
  return `${proto.toUpperCase()}:${port}`;
}

// kube-proxy's set of the addresses that accept NodePort traffic (proxier.go nodePortIPsSet), elements
// plain addresses ("192.168.0.2"), or wrapped in {"elem": {"val": ...}} when an element has a comment.
const NODEPORT_IPS = "nodeport-ips";

function addressOf(e: unknown): string | null {
  const val = isObj(e) && isObj(e.elem) ? e.elem.val : e;
  return typeof val === "string" ? val : null;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** The objects under "nftables", each a one-key wrapper like {"table": {...}}. */
export function nftItems(text: string, command: string): Result<Obj[]> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return unparsable(`${command}: not JSON: ${excerpt(text)}`);
  }
  if (!isObj(doc) || !Array.isArray(doc.nftables)) {
    return unparsable(`${command}: no "nftables" array: ${excerpt(text)}`);
  }
  const out: Obj[] = [];
  for (const it of doc.nftables) {
    if (!isObj(it)) return unparsable(`${command}: item is not an object: ${excerpt(JSON.stringify(it))}`);
    out.push(it);
  }
  return parsed(out);
}

// A set lookup, not the schema's safeParse: this runs once per chain, 110,000 times a full read at
// 10,000 Services.
const FAMILIES: ReadonlySet<unknown> = new Set(NftFamily.options);

function family(v: unknown): Family | null {
  return FAMILIES.has(v) ? (v as Family) : null;
}

export function parseNftTables(text: string): Result<NftTable[]> {
  const r = nftItems(text, "nft -j list tables");
  if (!r.ok) return r;
  const out: NftTable[] = [];
  for (const it of r.value) {
    if (!("table" in it)) continue;
    const t = it.table;
    const f = isObj(t) ? family(t.family) : null;
    if (!isObj(t) || f === null || typeof t.name !== "string") {
      return unparsable(`nft -j list tables: bad table ${excerpt(JSON.stringify(t))}`);
    }
    out.push({ family: f, name: t.name });
  }
  return parsed(out);
}

/** The chain of one `{"chain": {...}}` item, or the error that names it bad. */
function chainOf(c: unknown): NftChain | string {
  const f = isObj(c) ? family(c.family) : null;
  if (!isObj(c) || f === null || typeof c.table !== "string" || typeof c.name !== "string") {
    return `nft -j list chains: bad chain ${excerpt(JSON.stringify(c))}`;
  }
  const chain: NftChain = { family: f, table: c.table, name: c.name };
  if (typeof c.hook === "string") chain.hook = c.hook;
  if (typeof c.policy === "string") chain.policy = c.policy;
  return chain;
}

export function parseNftChains(text: string): Result<NftChain[]> {
  const r = nftItems(text, "nft -j list chains");
  if (!r.ok) return r;
  const out: NftChain[] = [];
  for (const it of r.value) {
    if (!("chain" in it)) continue;
    const chain = chainOf(it.chain);
    if (typeof chain === "string") return unparsable(chain);
    out.push(chain);
  }
  return parsed(out);
}

/**
 * The same chains as parseNftChains, handed to `visit` one at a time and never held together: the
 * caller keeps what it needs (counts, a few chains), and the 15 MB listing of 10,000 Services is never
 * one JSON tree. Fails exactly where parseNftChains fails (and on a repeated "nftables" key).
 */
export function eachNftChain(text: string, visit: (c: NftChain) => void): Result<number> {
  let chains = 0;
  const r = eachNftItem(text, "nft -j list chains", (it) => {
    if (!("chain" in it)) return null;
    const chain = chainOf(it.chain);
    if (typeof chain === "string") return chain;
    visit(chain);
    chains++;
    return null;
  });
  return r.ok ? parsed(chains) : r;
}

/** A named set or map as `nft -j -t list sets|maps` declares it: no elements, so no count. */
export type NftSetName = Omit<NftSet, "elements" | "nodePorts" | "addresses">;

/**
 * A set's key type, as text: a name ("ipv4_addr"), a concatenation's names joined, or "" when absent.
 * Newer nft prints a set declared with `typeof` as {"typeof": <expression>} (libnftables json.c,
 * set_key_dtype_json); that, and any other shape, is kept as its JSON text, never a failure: the type
 * is only described, and one odd set in someone else's table must not fail the whole read. Never
 * String() of an object: it throws when the object's own "toString" is not a function (the fuzz test).
 */
function setType(t: unknown): string {
  if (t === undefined || t === null) return "";
  if (typeof t === "string") return t;
  if (Array.isArray(t) && t.every((x) => typeof x === "string")) return t.join(" . ");
  if (isObj(t) && "typeof" in t && Object.keys(t).length === 1)
    return clip(`typeof ${JSON.stringify(t.typeof)}`, 200);
  return clip(JSON.stringify(t), 200);
}

/** Each set/map object of a listing, checked; `command` names the listing in errors. */
function setObjects(text: string, command: string): Result<{ s: Obj; decl: NftSetName }[]> {
  const r = nftItems(text, command);
  if (!r.ok) return r;
  const out: { s: Obj; decl: NftSetName }[] = [];
  for (const it of r.value) {
    const kind = "set" in it ? "set" : "map" in it ? "map" : null;
    if (kind === null) continue;
    const s = it[kind];
    const f = isObj(s) ? family(s.family) : null;
    if (!isObj(s) || f === null || typeof s.table !== "string" || typeof s.name !== "string") {
      return unparsable(`${command}: bad ${kind} ${excerpt(JSON.stringify(s))}`);
    }
    const type = setType(s.type);
    out.push({ s, decl: { family: f, table: s.table, name: s.name, kind, type } });
  }
  return parsed(out);
}

/**
 * Parses `nft -j -t list sets|maps`: what is declared, never how many elements. --terse drops the
 * elements, so a count read off this listing would say "empty" for what was not read.
 */
export function parseNftSetNames(text: string): Result<NftSetName[]> {
  const r = setObjects(text, "nft -j -t list sets/maps");
  return r.ok ? parsed(r.value.map((x) => x.decl)) : r;
}

/** Parses `nft -j list set|map <family> <table> <name>` (or a family's `list sets|maps`), elements included. */
export function parseNftSets(text: string): Result<NftSet[]> {
  const r = setObjects(text, "nft -j list sets/maps");
  if (!r.ok) return r;
  const out: NftSet[] = [];
  for (const { s, decl } of r.value) {
    const { kind } = decl;
    if (s.elem !== undefined && !Array.isArray(s.elem)) {
      return unparsable(`nft -j list ${kind}s: "elem" of ${excerpt(decl.name)} is not a list`);
    }
    const elements = Array.isArray(s.elem) ? s.elem.length : 0;
    const nodePorts =
      NODEPORT_MAPS.has(decl.name) && Array.isArray(s.elem)
        ? s.elem.map(nodePortOf).filter((p): p is string => p !== null)
        : undefined;
    let addresses: string[] | undefined;
    if (decl.name === NODEPORT_IPS && kind === "set") {
      addresses = (Array.isArray(s.elem) ? s.elem : []).map(addressOf).filter((a) => a !== null);
      // An element that is no address (a range, a prefix) is not understood: not read, never "not in the set".
      if (addresses.length !== elements)
        return unparsable(`nft -j list set: an element of ${NODEPORT_IPS} is not one address`);
    }
    out.push({ ...decl, elements, ...(nodePorts ? { nodePorts } : {}), ...(addresses ? { addresses } : {}) });
  }
  return parsed(out);
}
