import { canonicalIp } from "../../../agent/contract.js";

// Reading a finding's evidence: every value is checked for its shape, a cut list is named as cut.

export const strings = (v: unknown): string[] | null =>
  Array.isArray(v) && v.every((x) => typeof x === "string") ? (v as string[]) : null;
/** The last entry of a list the agent cut short. */
export const CUT = /^… and \d+ more$/;
// Compared in canonical form: the API keeps an address as written, the kernel prints RFC 5952.
export const ipOf = (a: string) => {
  const bare = a.replace(/^\[|\]$/g, "");
  return canonicalIp(bare) ?? bare;
};

/** "TCP 192.168.1.240:443 (7 connections)" -> [protocol, address, port]; null for anything else. */
export function destinationOf(e: string): [string, string, number] | null {
  const m = /^(\S+) (\[[^\]]+\]|[^\s:]+):(\d+) /.exec(e);
  return m === null ? null : [m[1]!, ipOf(m[2]!), Number(m[3])];
}

/** Evidence entries that start with an address (maybe "[v6]"), then a space or the end. */
export const firstWord = (e: string) => ipOf(e.split(" ")[0] ?? "");
