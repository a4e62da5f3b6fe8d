// The tools of the agent's image (Debian trixie: nft, ip, ipset, ip(6)tables-{nft,legacy}-save) from the
// private root scripts/nft11-root.sh builds, as wrappers in ROOT/proxyscope-image-tools. Located, never
// built here: building needs the Debian mirror, and a test must not reach the network.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { nft11Root } from "./nft11-root.js";

const ASKED = [
  ["nft", ["--version"], /nftables v(1\.1\.\d+)/, "nft"],
  ["iptables-nft-save", ["--version"], /v(1\.8\.\d+) \(nf_tables\)/, "iptables"],
  ["iptables-legacy-save", ["--version"], /v(1\.8\.\d+) \(legacy\)/, "iptables-legacy"],
  ["ipset", ["version"], /ipset v(\d+\.\d+)/, "ipset"],
  ["ip", ["-V"], /iproute2-(\d+\.\d+\.\d+)/, "iproute2"],
] as const;

/** The wrappers' directory and each tool's version, or why they cannot be used. */
export function trixieTools(): { ok: true; dir: string; versions: string[] } | { ok: false; reason: string } {
  const root = nft11Root();
  const dir = join(root, "proxyscope-image-tools");
  const versions: string[] = [];
  for (const [tool, args, pattern, label] of ASKED) {
    const r = spawnSync(join(dir, tool), [...args], { encoding: "utf8", timeout: 10_000 });
    const v = pattern.exec(`${r.stdout ?? ""}${r.stderr ?? ""}`)?.[1];
    if (r.status !== 0 || v === undefined) {
      const why = r.error ? String(r.error.message) : `exit ${r.status ?? r.signal}`;
      return {
        ok: false,
        reason: `no trixie ${tool} in ${dir} (${why}); build it with scripts/setup-debian.sh --test or scripts/nft11-root.sh ${root}`,
      };
    }
    versions.push(`${label} ${v}`);
  }
  return { ok: true, dir, versions };
}
