import { z } from "zod";
import type { IpRule } from "../facts/ip-rules.js";
import { parseJsonArray } from "./ip-json.js";
import type { Result } from "../../common/result.js";

// `ip -j rule show` (iproute2 ip/iprule.c print_rule): "src" is "all" or an address with "srclen",
// "dst" only when a `to` selector is set, "not" present (null) when inverted, the action as "table"
// (lookup) or "action" (prohibit, unreachable, blackhole, goto…). Only what we read is checked.
const Rule = z.looseObject({
  priority: z.number().int(),
  not: z.null().optional(),
  src: z.string(),
  srclen: z.number().int().optional(),
  dst: z.string().optional(),
  dstlen: z.number().int().optional(),
  table: z.string().optional(),
  action: z.string().optional(),
});
type Rule = z.infer<typeof Rule>;

// Other selectors printed as `ip rule` prints them, so the evidence shows the whole rule.
const SELECTORS: readonly (readonly [string, string])[] = [
  ["tos", "tos"],
  ["fwmark", "fwmark"],
  ["iif", "iif"],
  ["oif", "oif"],
  ["ipproto", "ipproto"],
  ["sport", "sport"],
  ["dport", "dport"],
  ["uidrange", "uidrange"],
];

function prefix(addr: string, len: number | undefined): string {
  return len === undefined ? addr : `${addr}/${len}`;
}

function textOf(r: Rule): string {
  const raw = r as Record<string, unknown>;
  const parts = [`${r.priority}:`];
  if ("not" in raw) parts.push("not");
  parts.push("from", prefix(r.src, r.srclen));
  if (r.dst !== undefined) parts.push("to", prefix(r.dst, r.dstlen));
  for (const [key, word] of SELECTORS) {
    const v = raw[key];
    if (typeof v === "string" || typeof v === "number") {
      const mask = key === "fwmark" && typeof raw.fwmask === "string" ? `/${raw.fwmask}` : "";
      parts.push(word, `${v}${mask}`);
    }
  }
  if (r.table !== undefined) parts.push("lookup", r.table);
  else if (r.action !== undefined) parts.push(r.action);
  return parts.join(" ");
}

/** Parses `ip -j rule show` (either family): every rule with its address selectors. */
export function parseIpRuleJson(text: string, command: string): Result<IpRule[]> {
  const r = parseJsonArray(text, Rule, command);
  if (!r.ok) return r;
  return {
    ok: true,
    value: r.value.map((x) => ({
      priority: x.priority,
      not: "not" in x,
      src: x.src,
      srcLen: x.srclen ?? null,
      dst: x.dst ?? null,
      dstLen: x.dstlen ?? null,
      text: textOf(x),
    })),
  };
}
