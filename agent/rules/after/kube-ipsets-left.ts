import { LEFT_BEHIND } from "../../view/build.js";
import { deletion } from "../guess.js";
import { listed, rule } from "../rule.js";

export const ipsetsLeft = rule({
  findings: { "kube-ipsets-left": { severity: "warning", stage: "after", tags: ["leftover"] } },
  needs: ["ipsets"],
  evaluate({ view }, opts) {
    const { phase, kubeProxyIpsets } = view;
    const sets = kubeProxyIpsets ?? [];
    if (sets.length === 0 || !LEFT_BEHIND.has(phase)) return [];
    const v6 = sets.filter((s) => s.name.startsWith("KUBE-6-"));
    return [
      {
        id: "kube-ipsets-left",
        severity: "warning",
        stage: "after",
        blocksMigration: false,
        title: `${sets.length} kube-proxy ipsets are left${why(phase, v6.length)}`,
        evidence: {
          sets: listed(
            sets.map((s) => `${s.name} (${s.type}, ${s.entries} entries)`),
            opts.maxListed,
          ),
          ipv6Sets: v6.length,
        },
        // By exact name: a `grep '^KUBE-'` would take kube-router's KUBE-SRC-*/KUBE-DST-* sets too (k3s runs its
        // network-policy controller on every node), and they are in use.
        remedy: deletion(
          view,
          `${destroyCommand(
            sets.map((s) => s.name),
            opts.maxListed,
          )}   (after the iptables chains that reference them are gone; only these names: other KUBE-* sets, such as kube-router's KUBE-SRC-*/KUBE-DST-*, are not kube-proxy's)`,
        ),
      },
    ];
  },
});

// Why they are still there. iptables mode runs no ipvs cleanup at all (cmd/kube-proxy/app/server_linux.go
// platformCleanup: `if !isIPTablesBased(mode) || cleanupAndExit`); the other modes' cleanup destroys only
// the IPv4 sets (the recorded kube-proxy corpus shows KUBE-6-* surviving the switch to nftables mode).
function why(phase: string, v6: number): string {
  if (phase === "iptables") return " (iptables mode never cleans up ipvs mode's sets)";
  return v6 > 0 ? ` (${v6} IPv6: kube-proxy's own cleanup only destroys the IPv4 ones)` : "";
}

/** `ipset destroy` for each named set, quoted; a long list is said as a count, never cut to a prefix match. */
function destroyCommand(names: string[], max: number): string {
  if (names.length > max)
    return `proxyscope-agent cleanup (it destroys exactly kube-proxy's ${names.length} sets), or ipset destroy <name> for each set listed in the evidence`;
  return `for s in ${names.map((n) => `'${n}'`).join(" ")}; do ipset destroy "$s"; done`;
}
