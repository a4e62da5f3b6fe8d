import type { KernelFacts } from "../facts/host.js";
import { readTextFile } from "../../common/regular-file.js";
import { parseModulesBuiltin, parseModulesDep, parseProcModules } from "../parse/kernel-modules.js";
import { defineProbe } from "./types.js";

/**
 * What kube-proxy's nftables mode loads rules into (pkg/proxy/nftables/proxier.go): nat base chains
 * (nft_chain_nat, nf_nat), dnat (nft_nat), masquerade (nft_masq), ct state/ct original (nft_ct),
 * `numgen random mod N vmap` for endpoint choice (nft_numgen), `fib daddr type local` in tables of
 * family ip and ip6 (nft_fib_ipv4/6 on nft_fib) and `reject` (nft_reject_ipv4/6 on nft_reject).
 * Names as in 5.13+ kernels (the _ipv4/_ipv6 nat and masq modules were merged in 5.1/5.2).
 */
const NFTABLES_MODE_MODULES = [
  "nf_tables",
  "nf_nat",
  "nft_chain_nat",
  "nft_ct",
  "nft_nat",
  "nft_masq",
  "nft_numgen",
  "nft_fib",
  "nft_fib_ipv4",
  "nft_fib_ipv6",
  "nft_reject",
  "nft_reject_ipv4",
  "nft_reject_ipv6",
] as const;

export const kernelModulesProbe = defineProbe("kernel-modules", {
  needs: ["kernel"],
  async run(ctx) {
    const procModules = `${ctx.procRoot}/modules`;
    const pm = await readTextFile(procModules, 4 * 1024 * 1024);
    let loaded = new Set<string>();
    if (pm.ok) {
      const p = parseProcModules(pm.text);
      if (!p.ok) return { ok: false, error: { kind: "garbage", message: p.error, command: procModules } };
      loaded = p.value;
    } else if (!pm.missing) {
      return { ok: false, error: pm.error };
    } // else: a kernel built without module support has no /proc/modules; nothing is "loaded".

    const kernel = ctx.prior.kernel;
    const release = kernel?.ok ? (kernel.facts as KernelFacts).release : null;
    let builtin: Set<string> | null = null;
    let dep: Set<string> | null = null;
    if (release !== null) {
      const dir = `${ctx.hostRoot.replace(/\/$/, "")}/lib/modules/${release}`;
      const b = await readTextFile(`${dir}/modules.builtin`, 4 * 1024 * 1024);
      const d = await readTextFile(`${dir}/modules.dep`, 16 * 1024 * 1024);
      if (b.ok && d.ok) {
        const pb = parseModulesBuiltin(b.text);
        if (!pb.ok)
          return {
            ok: false,
            error: { kind: "garbage", message: pb.error, command: `${dir}/modules.builtin` },
          };
        const pd = parseModulesDep(d.text);
        if (!pd.ok)
          return { ok: false, error: { kind: "garbage", message: pd.error, command: `${dir}/modules.dep` } };
        builtin = pb.value;
        dep = pd.value;
      } else {
        const bad = [b, d].find((x) => !x.ok && !x.missing);
        if (bad && !bad.ok) return { ok: false, error: bad.error };
      }
    }

    return {
      ok: true,
      facts: {
        modules: NFTABLES_MODE_MODULES.map((name) => ({
          name,
          state: loaded.has(name)
            ? "loaded"
            : builtin?.has(name)
              ? "builtin"
              : dep?.has(name)
                ? "available"
                : "absent",
        })),
        moduleTreeReadable: builtin !== null && dep !== null,
      },
    };
  },
});
