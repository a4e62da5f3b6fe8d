import { stat } from "node:fs/promises";
import { readTextFile } from "../../common/regular-file.js";
import { findApkPackage } from "../parse/apk-installed.js";
import { findDpkgPackage, type InstalledPackage } from "../parse/dpkg-status.js";
import { parseNftVersionOutput, upstreamVersion } from "../parse/nft-version.js";
import { defineProbe, type ProbeOutcome } from "./types.js";
import type { Result } from "../../common/result.js";

const DB_CAP = 64 * 1024 * 1024;
// rpmdb.sqlite (RHEL 9+, Fedora, Amazon Linux 2023) or Berkeley DB Packages (RHEL 8, AL2).
const RPM_DBS = ["/var/lib/rpm/rpmdb.sqlite", "/var/lib/rpm/Packages", "/usr/lib/sysimage/rpm/rpmdb.sqlite"];
// Where distributions install nft (usr-merged or not). None of them present is "not installed".
const NFT_BINARIES = ["/usr/sbin/nft", "/sbin/nft", "/usr/bin/nft", "/bin/nft", "/usr/local/sbin/nft"];

type Lookup = { kind: "found"; pkg: InstalledPackage } | { kind: "not-installed" } | { kind: "no-db" };

// The HOST's nft, not the one in this image: package databases under hostRoot first; running
// `nft` is only the host's nft when we are not in a container (hostRoot "/").
export const nftVersionProbe = defineProbe("nft-version", {
  async run(ctx) {
    const root = ctx.hostRoot.replace(/\/$/, "");
    const dbs = [
      { source: "dpkg", path: `${root}/var/lib/dpkg/status`, find: findDpkgPackage },
      { source: "apk", path: `${root}/lib/apk/db/installed`, find: findApkPackage },
    ] as const;
    const notInstalled: ("dpkg" | "apk")[] = [];
    for (const db of dbs) {
      const r = await lookup(db.path, db.find);
      if ("error" in r) return r.error;
      if (r.kind === "found") {
        const up = upstreamVersion(r.pkg.version);
        if (!up.ok) return garbage(up.error, db.path);
        return {
          ok: true,
          facts: { version: up.value, source: db.source, detail: `nftables ${r.pkg.version}` },
        };
      }
      if (r.kind === "not-installed") notInstalled.push(db.source);
    }

    if (ctx.hostRoot === "/") {
      const ex = await ctx.tools.run("nft", ["--version"], { timeoutMs: ctx.callTimeoutMs, maxBytes: 4096 });
      if (ex.ok) {
        const v = parseNftVersionOutput(ex.stdout);
        if (!v.ok) return garbage(v.error, "nft --version");
        return {
          ok: true,
          facts: { version: v.value, source: "exec", detail: ex.stdout.trim() },
        };
      }
      if (ex.error.kind !== "missing-tool") return { ok: false, error: ex.error };
    }

    // No package and no binary is an answer ("not installed"); a binary we could not ask stays unknown,
    // and so does a host whose RPM database we cannot read.
    const first = notInstalled[0];
    const rpmDb = await findRpmDb(root);
    if (rpmDb === null || first !== undefined) {
      const binary = await findBinary(root);
      if ("error" in binary) return binary.error;
      if (binary.path === null) {
        const where =
          first === "dpkg" || first === "apk"
            ? `the host's ${first} database has no nftables package installed`
            : "there is no dpkg, apk or rpm package database";
        return {
          ok: true,
          facts: {
            version: null,
            source: first ?? "none",
            detail: `not installed: ${where}, and there is no nft binary under ${ctx.hostRoot} (${NFT_BINARIES.join(", ")})`,
            installed: false,
          },
        };
      }
    }
    if (first === "dpkg" || first === "apk") {
      return {
        ok: true,
        facts: {
          version: null,
          source: first,
          detail: `the host's ${first} database has no nftables package installed`,
        },
      };
    }
    if (rpmDb !== null) {
      return {
        ok: true,
        facts: {
          version: null,
          source: "none",
          detail: `the host keeps packages in an RPM database (${rpmDb}), which this agent cannot read; run "rpm -q nftables" on the node`,
        },
      };
    }
    return {
      ok: true,
      facts: {
        version: null,
        source: "none",
        detail: `no dpkg, apk or rpm package database under ${ctx.hostRoot}`,
      },
    };
  },
});

async function findRpmDb(root: string): Promise<string | null> {
  for (const rel of RPM_DBS) {
    const r = await readTextFile(`${root}${rel}`, 1);
    if (r.ok || !r.missing) return rel;
  }
  return null;
}

async function findBinary(root: string): Promise<{ path: string | null } | { error: ProbeOutcome<never> }> {
  for (const rel of NFT_BINARIES) {
    try {
      await stat(`${root}${rel}`);
      return { path: rel };
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // Only "it is not there" counts as absent; a path we were denied is unread, not missing.
      if (code !== "ENOENT" && code !== "ENOTDIR") {
        return {
          error: {
            ok: false,
            error: {
              kind: code === "EACCES" || code === "EPERM" ? "not-permitted" : "io",
              message: `cannot tell whether nft is installed: ${code ?? String(e)}`,
              command: `${root}${rel}`,
            },
          },
        };
      }
    }
  }
  return { path: null };
}

// The package database answers the same until it changes, and reading it is not free: Debian's
// status file is ~1 MB, and splitting it into stanzas held the event loop for tens of ms on every
// scan (so /metrics and /report waited). An answer is kept per path while the file's identity
// (device, inode, size, change times) is the same; dpkg and apk replace the file on every change.
const answers = new Map<string, { identity: string; answer: Lookup }>();

async function identity(path: string): Promise<string | null> {
  try {
    const s = await stat(path, { bigint: true });
    return [s.dev, s.ino, s.size, s.mtimeNs, s.ctimeNs].join(":");
  } catch {
    return null; // let the read say why
  }
}

async function lookup(
  path: string,
  find: (text: string, name: string) => Result<InstalledPackage | null>,
): Promise<Lookup | { error: ProbeOutcome<never> }> {
  const id = await identity(path);
  const known = answers.get(path);
  if (id !== null && known?.identity === id) return known.answer;
  const r = await readTextFile(path, DB_CAP);
  if (!r.ok) return r.missing ? { kind: "no-db" } : { error: { ok: false, error: r.error } };
  const p = find(r.text, "nftables");
  if (!p.ok) return { error: garbage(p.error, path) };
  const answer: Lookup = p.value ? { kind: "found", pkg: p.value } : { kind: "not-installed" };
  if (id !== null) answers.set(path, { identity: id, answer });
  return answer;
}

function garbage(message: string, command: string): ProbeOutcome<never> {
  return { ok: false, error: { kind: "garbage", message, command } };
}
