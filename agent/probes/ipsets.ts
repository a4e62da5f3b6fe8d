import { stat } from "node:fs/promises";
import { isKubeProxyIpset } from "../facts/owners.js";
import { parseIpsetTerse } from "../parse/ipset-list.js";
import { defineProbe } from "./types.js";

const ARGS = ["list", "-terse"] as const;
const MAX_BYTES = 16 * 1024 * 1024;

/**
 * Whether the kernel has ip_set, from <sys>/module/ip_set: present when the module is loaded, and
 * also when it is built in (it has a max_sets parameter, so sysfs lists it either way).
 */
async function ipSetInKernel(sysRoot: string): Promise<boolean | "unknown"> {
  try {
    await stat(`${sysRoot}/module/ip_set`);
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR") return "unknown";
    try {
      await stat(`${sysRoot}/module`);
      return false;
    } catch {
      return "unknown"; // no sysfs to ask: let ipset answer
    }
  }
}

// Every ipset with its header only (`-terse`: no members, which can be 100,000 lines), each marked
// when its name is one of kube-proxy's ipvs-mode sets. Not run when ip_set is absent: listing would
// make the kernel load the module.
export const ipsetsProbe = defineProbe("ipsets", {
  async run(ctx) {
    if ((await ipSetInKernel(ctx.sysRoot)) === false) {
      return { ok: true, facts: { available: false, sets: [] } };
    }
    const r = await ctx.tools.run("ipset", ARGS, { timeoutMs: ctx.callTimeoutMs, maxBytes: MAX_BYTES });
    if (!r.ok) return r;
    const p = parseIpsetTerse(r.stdout);
    if (!p.ok) {
      return { ok: false, error: { kind: "garbage", message: p.error, command: `ipset ${ARGS.join(" ")}` } };
    }
    return {
      ok: true,
      facts: {
        available: true,
        sets: p.value.map((s) => ({
          name: s.name,
          type: s.type,
          family: s.family,
          entries: s.entries,
          references: s.references,
          kubeProxy: isKubeProxyIpset(s.name),
        })),
      },
    };
  },
});
