import { CONFIG_SOURCE_NEEDS, configKubeProxyReads } from "../../checks/config-source.js";
import { configuredMode } from "../../checks/proxy-config.js";
import type { KubeProxyConfigFile, ModeKeys } from "../../report/cluster-facts.js";
import { rule } from "../rule.js";

// nftables mode reads masqueradeAll, masqueradeBit and its sync periods from its own block; ipvs and
// iptables mode read masqueradeAll and masqueradeBit from `iptables:`, and the sync periods from their
// own block (kubernetes v1.34.4 pkg/proxy/apis/config/v1alpha1/conversion.go
// Convert_v1alpha1_KubeProxyConfiguration_To_config_KubeProxyConfiguration; cmd/kube-proxy/app/
// server_linux.go createProxier passes IPTables.MasqueradeBit to the iptables and ipvs proxiers and
// NFTables.MasqueradeBit to the nftables one). nftables mode's defaults: masqueradeAll false, bit 14,
// syncPeriod 30s, minSyncPeriod 1s (v1alpha1/defaults.go).
const NFT_DEFAULT_MS = { syncPeriod: 30_000, minSyncPeriod: 1_000 } as const;
const NFT_DEFAULT_BIT = 14;

interface CarriedKey {
  from: string;
  to: string;
  value: boolean | number | string;
}

/** A Go duration ("1m0s", "500ms", "1h") in milliseconds; null when it is not one. */
function goDurationMs(text: string): number | null {
  const unit: Record<string, number> = {
    h: 3_600_000,
    m: 60_000,
    s: 1_000,
    ms: 1,
    us: 0.001,
    µs: 0.001,
    ns: 1e-6,
  };
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== text) return null;
  return parts.reduce((ms, p) => ms + Number(p[1]) * unit[p[2]!]!, 0);
}

const sameDuration = (a: string, b: string | null, fallbackMs: number) => {
  const x = goDurationMs(a);
  const y = b === null ? fallbackMs : goDurationMs(b);
  return x !== null && y !== null ? x === y : a === b;
};

/** What the current mode reads that nftables mode would not, with the nftables key that carries it. */
function keysNotCarried(cfg: KubeProxyConfigFile, mode: string): CarriedKey[] {
  const ipt = cfg.modeKeys.iptables;
  const nft = cfg.modeKeys.nftables;
  const out: CarriedKey[] = [];
  if (ipt.masqueradeAll === true && nft.masqueradeAll !== true)
    out.push({ from: "iptables.masqueradeAll", to: "nftables.masqueradeAll", value: true });
  const bit = ipt.masqueradeBit;
  if (bit !== null && bit !== NFT_DEFAULT_BIT && nft.masqueradeBit !== bit)
    out.push({ from: "iptables.masqueradeBit", to: "nftables.masqueradeBit", value: bit });
  // Before the switch, the running mode's block; after it, whichever old block still holds tuning.
  const blocks: ["ipvs" | "iptables", ModeKeys][] =
    mode === "ipvs"
      ? [["ipvs", cfg.modeKeys.ipvs]]
      : mode === "iptables"
        ? [["iptables", ipt]]
        : [
            ["ipvs", cfg.modeKeys.ipvs],
            ["iptables", ipt],
          ];
  for (const key of ["syncPeriod", "minSyncPeriod"] as const) {
    const from = blocks.find(([, b]) => b[key] !== null);
    const value = from?.[1][key];
    if (from === undefined || value === null || value === undefined) continue;
    if (sameDuration(value, nft[key], NFT_DEFAULT_MS[key])) continue;
    out.push({ from: `${from[0]}.${key}`, to: `nftables.${key}`, value });
  }
  return out;
}

// One line of YAML flow style: the remedy is read in terminals, tables and HTML alike.
const yamlBlock = (keys: readonly CarriedKey[]) =>
  `nftables: {${keys.map((k) => `${k.to.slice("nftables.".length)}: ${String(k.value)}`).join(", ")}}`;

/** Settings the mode switch silently drops: nftables mode reads them from another block. */
export const configKeysNotCarried = rule({
  findings: { "cluster-config-keys-not-carried": { severity: "warning", stage: ["before", "after"] } },
  needs: CONFIG_SOURCE_NEEDS,
  evaluate({ facts }) {
    // Only the config kube-proxy reads, and only when it was read: unread is not "no keys". What flags
    // set is in no ConfigMap (--masquerade-all, say, is mode-independent), nor is a host file's.
    const cfg = configKubeProxyReads(facts);
    const cm = facts.kubeProxyConfigMap;
    const mode = configuredMode(facts);
    if (!cfg || !cm || (mode !== "ipvs" && mode !== "iptables" && mode !== "nftables")) return [];
    const keys = keysNotCarried(cfg, mode);
    if (keys.length === 0) return [];
    const after = mode === "nftables";
    const where = `ConfigMap ${cm.name} (key ${cm.key ?? "config.conf"})`;
    return [
      {
        id: "cluster-config-keys-not-carried",
        severity: "warning",
        stage: after ? "after" : "before",
        blocksMigration: false,
        title: after
          ? `nftables mode ignores ${keys.map((k) => k.from).join(", ")}: these settings are not in effect`
          : `Switching only mode: drops ${keys.map((k) => k.from).join(", ")}: nftables mode reads its own keys`,
        evidence: {
          mode,
          notCarried: keys.map((k) => `${k.from}: ${String(k.value)}`),
          add: keys.map((k) => `${k.to}: ${String(k.value)}`),
        },
        remedy: `In ${where}, ${after ? "add" : "add, with mode: nftables,"} ${yamlBlock(keys)} (kubeadm: the same in the KubeProxyConfiguration passed to kubeadm, or kubeadm upgrade reverts it)`,
      },
    ];
  },
});
