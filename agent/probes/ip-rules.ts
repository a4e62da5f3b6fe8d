import type { IpRulesFacts } from "../facts/ip-rules.js";
import { readTextFile } from "../../common/regular-file.js";
import { parseIpRuleJson } from "../parse/ip-rule-json.js";
import { defineProbe } from "./types.js";

// A node with per-pod rules (AWS VPC CNI adds two per pod IP) has hundreds; this only bounds a runaway.
const MAX_BYTES = 16 * 1024 * 1024;

/**
 * The routing policy rules of both families: a rule selecting on a Service address (from or to) sees
 * that address in ipvs mode, where it is local on kube-ipvs0 and IPVS rewrites after routing, and the
 * endpoint's in nftables mode, which DNATs before routing (ip-rules-keyed-on-service-addresses).
 */
export const ipRulesProbe = defineProbe("ip-rules", {
  async run(ctx) {
    const families: IpRulesFacts["families"] = [];
    for (const family of ["inet", "inet6"] as const) {
      if (family === "inet6") {
        // ipv6.disable=1: the kernel has no IPv6 rules to list, and `ip -6 rule` fails; not a failure.
        const probe = `${ctx.procRoot}/sys/net/ipv6/conf/all/disable_ipv6`;
        const r = await readTextFile(probe, 64);
        if (!r.ok && r.missing) {
          families.push({ family, available: false, rules: [] });
          continue;
        }
        if (!r.ok) return { ok: false, error: r.error };
      }
      const args = ["-j", family === "inet" ? "-4" : "-6", "rule", "show"];
      const out = await ctx.tools.run("ip", args, { timeoutMs: ctx.callTimeoutMs, maxBytes: MAX_BYTES });
      if (!out.ok) return out;
      const command = `ip ${args.join(" ")}`;
      const rules = parseIpRuleJson(out.stdout, command);
      if (!rules.ok) return { ok: false, error: { kind: "garbage", message: rules.error, command } };
      families.push({ family, available: true, rules: rules.value });
    }
    return { ok: true, facts: { families } };
  },
});
