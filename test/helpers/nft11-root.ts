// nft 1.1.3 from Debian trixie in a private root (scripts/nft11-root.sh), for the tests that need sets
// written by a newer nft than the system's 1.0.6. `scripts/setup-debian.sh --test` builds it once into
// the cache below; PROXYSCOPE_NFT11_ROOT points elsewhere. Located, never built here: building needs the
// Debian mirror, and a test must not reach the network.
import { spawnSync } from "node:child_process";
import { join } from "node:path";

export function nft11Root(): string {
  const cache = process.env.XDG_CACHE_HOME ?? join(process.env.HOME ?? "/root", ".cache");
  return process.env.PROXYSCOPE_NFT11_ROOT ?? join(cache, "proxyscope", "nft11");
}

/** The wrapper that runs the root's nft with its own loader and libraries, or why it cannot be used. */
export function nft11(): { ok: true; nft: string; version: string } | { ok: false; reason: string } {
  const root = nft11Root();
  const nft = join(root, "proxyscope-tools", "nft");
  const r = spawnSync(nft, ["--version"], { encoding: "utf8", timeout: 10_000 });
  const version = /nftables v(1\.1\.\d+)/.exec(r.stdout ?? "")?.[1];
  if (r.status === 0 && version !== undefined) return { ok: true, nft, version };
  const why = r.error
    ? String(r.error.message)
    : `exit ${r.status ?? r.signal}: ${(r.stdout + r.stderr).trim()}`;
  return {
    ok: false,
    reason: `no nft 1.1 at ${nft} (${why}); build it with scripts/setup-debian.sh --test or scripts/nft11-root.sh ${root}`,
  };
}
