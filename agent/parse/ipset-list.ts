import { canonicalIp } from "./ip-text.js";
import { excerpt, parsed, unparsable } from "./result.js";
import type { Result } from "../../common/result.js";

// `ipset list -terse` (ipset 7.x) prints one header block per set, blocks separated by a blank line:
//
//   Name: KUBE-CLUSTER-IP
//   Type: hash:ip,port
//   Revision: 6
//   Header: family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x4bd180ed
//   Size in memory: 240
//   References: 0
//   Number of entries: 1
//
// A full `ipset list` adds "Members:" and one line per member; those are skipped, so either works.

interface IpsetHeader {
  name: string;
  type: string;
  revision: number;
  /** "inet"/"inet6" from the Header line; null for types without a family (bitmap:port). */
  family: "inet" | "inet6" | null;
  header: string;
  sizeInMemory: number;
  references: number;
  entries: number;
}

const KEYS: Record<string, keyof IpsetHeader> = {
  Name: "name",
  Type: "type",
  Revision: "revision",
  Header: "header",
  "Size in memory": "sizeInMemory",
  References: "references",
  "Number of entries": "entries",
};
const NUMERIC = new Set<keyof IpsetHeader>(["revision", "sizeInMemory", "references", "entries"]);

export function parseIpsetTerse(text: string): Result<IpsetHeader[]> {
  const sets: IpsetHeader[] = [];
  let cur: Partial<Record<keyof IpsetHeader, string | number>> | null = null;
  let inMembers = false;
  const lines = text.split("\n");
  const close = (): string | null => {
    if (cur === null) return null;
    for (const key of Object.values(KEYS)) {
      if (cur[key] === undefined) {
        return key === "entries"
          ? `set ${excerpt(String(cur.name))} has no "Number of entries" (ipset older than 7?)`
          : `set ${excerpt(String(cur.name))} has no ${key}`;
      }
    }
    const family = /(?:^| )family (inet6?)(?: |$)/.exec(String(cur.header))?.[1] ?? null;
    sets.push({ ...(cur as Omit<IpsetHeader, "family">), family: family as IpsetHeader["family"] });
    cur = null;
    return null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === "") {
      const err = close();
      if (err) return unparsable(err);
      inMembers = false;
      continue;
    }
    if (inMembers) continue;
    if (line === "Members:") {
      inMembers = true;
      continue;
    }
    const m = /^([A-Za-z][A-Za-z ]*): ?(.*)$/.exec(line);
    const key = m ? KEYS[m[1]!] : undefined;
    if (!m || key === undefined) return unparsable(`ipset list line ${i + 1}: ${excerpt(line)}`);
    if (key === "name") {
      const err = close();
      if (err) return unparsable(err);
      cur = {};
    } else if (cur === null) {
      return unparsable(`ipset list line ${i + 1}: ${m[1]} before any Name: ${excerpt(line)}`);
    }
    if (NUMERIC.has(key)) {
      if (!/^\d+$/.test(m[2]!) || !Number.isSafeInteger(Number(m[2])))
        return unparsable(`ipset list line ${i + 1}: not a number: ${excerpt(line)}`);
      cur[key] = Number(m[2]);
    } else cur[key] = m[2]!;
  }
  const err = close();
  if (err) return unparsable(err);
  return parsed(sets);
}

/** Parses `ipset list -name`: one set name per line. */
export function parseIpsetNames(text: string): Result<string[]> {
  const names = text.split("\n").filter((l) => l !== "");
  const bad = names.find((n) => !/^[\x21-\x7e]{1,31}$/.test(n));
  if (bad !== undefined) return unparsable(`not an ipset name: ${excerpt(bad)}`);
  return parsed(names);
}

/**
 * The members of each set in a full `ipset list` (no -terse), by set name, as ipset prints them
 * ("10.96.0.1,tcp:443", "30080"). Bounded by what the caller caps the output at.
 */
export function parseIpsetMembers(text: string): Result<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>();
  let name: string | null = null;
  let members: Set<string> | null = null;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === "") {
      members = null;
      continue;
    }
    if (members !== null) {
      members.add(line.split(" ")[0]!);
      continue;
    }
    if (line.startsWith("Name: ")) {
      name = line.slice(6);
      out.set(name, new Set());
    } else if (line === "Members:") {
      if (name === null) return unparsable(`ipset list line ${i + 1}: Members: before any Name:`);
      members = out.get(name)!;
    } else if (!/^[A-Za-z][A-Za-z ]*: ?/.test(line)) {
      return unparsable(`ipset list line ${i + 1}: ${excerpt(line)}`);
    }
  }
  return parsed(out);
}

/**
 * The NodePorts ("TCP:30080") in one of kube-proxy's KUBE-NODE-PORT-* sets, from `ipset list <set>`:
 * bitmap:port members are a port, hash:ip,port (SCTP) ones "IP,sctp:PORT"; a member may carry
 * ` comment "..."`. The protocol of a bitmap:port set is in its name (KUBE-NODE-PORT-TCP, -LOCAL-UDP).
 */
export function parseNodePortMembers(text: string, setName: string): Result<string[]> {
  const at = text.split("\n").indexOf("Members:");
  if (at < 0) return unparsable(`ipset list ${excerpt(setName)}: no "Members:" line`);
  const nameProto = /-(TCP|UDP|SCTP)/.exec(setName)?.[1] ?? null;
  const out: string[] = [];
  for (const line of text.split("\n").slice(at + 1)) {
    if (line === "") break;
    const member = line.split(" ")[0]!;
    const m = /^(?:[^,]+,(tcp|udp|sctp):)?(\d{1,5})$/.exec(member);
    const proto = m?.[1]?.toUpperCase() ?? nameProto;
    if (!m || proto === null || Number(m[2]) > 65535)
      return unparsable(`ipset list ${excerpt(setName)}: not a NodePort member: ${excerpt(line)}`);
    out.push(`${proto}:${Number(m[2])}`);
  }
  return parsed(out);
}

/** The ports of a bitmap:port set (KUBE-HEALTH-CHECK-NODE-PORT), from `ipset list <set>`. */
export function parsePortMembers(text: string, setName: string): Result<number[]> {
  const at = text.split("\n").indexOf("Members:");
  if (at < 0) return unparsable(`ipset list ${excerpt(setName)}: no "Members:" line`);
  const out: number[] = [];
  for (const line of text.split("\n").slice(at + 1)) {
    if (line === "") break;
    const m = /^(\d{1,5})(?: |$)/.exec(line);
    if (!m || Number(m[1]) > 65535)
      return unparsable(`ipset list ${excerpt(setName)}: not a port member: ${excerpt(line)}`);
    out.push(Number(m[1]));
  }
  return parsed(out);
}

/**
 * The members of a hash:ip,port set (KUBE-LOAD-BALANCER-LOCAL, KUBE-EXTERNAL-IP-LOCAL) as destinations,
 * "TCP 203.0.113.10:80" ("TCP [2001:db8::1]:80" for IPv6), from `ipset list <set>`.
 */
export function parseIpPortMembers(text: string, setName: string): Result<string[]> {
  const at = text.split("\n").indexOf("Members:");
  if (at < 0) return unparsable(`ipset list ${excerpt(setName)}: no "Members:" line`);
  const out: string[] = [];
  for (const line of text.split("\n").slice(at + 1)) {
    if (line === "") break;
    const m = /^([^,\s]+),(tcp|udp|sctp):(\d{1,5})(?: |$)/.exec(line);
    const ip = m ? canonicalIp(m[1]!) : null;
    if (!m || ip === null || Number(m[3]) > 65535)
      return unparsable(`ipset list ${excerpt(setName)}: not an address and port: ${excerpt(line)}`);
    const host = ip.includes(":") ? `[${ip}]` : ip;
    out.push(`${m[2]!.toUpperCase()} ${host}:${Number(m[3])}`);
  }
  return parsed(out);
}
