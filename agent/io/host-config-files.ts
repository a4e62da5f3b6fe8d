import { lstat, readdir, readlink } from "node:fs/promises";
import { posix } from "node:path";
import type { ProbeError } from "../facts/probe-error.js";
import { readTextFile } from "../../common/regular-file.js";

// Host files read through --host-root: a symbolic link there names a path on the host, so an absolute
// target is resolved under the host root again, never in the agent's own filesystem.
const MAX_LINKS = 16;
const MAX_ENTRIES = 4096;

type HostFileRead =
  { ok: true; text: string; masked: boolean } | { ok: false; missing: boolean; error: ProbeError };

function fail(path: string, e: unknown): { ok: false; missing: boolean; error: ProbeError } {
  const code = (e as NodeJS.ErrnoException).code;
  return {
    ok: false,
    missing: code === "ENOENT" || code === "ENOTDIR",
    error: {
      kind: code === "EACCES" || code === "EPERM" ? "not-permitted" : "io",
      message: `${path}: ${code ?? String(e)}`,
      command: path,
    },
  };
}

/**
 * The host path a host path ends at once its symbolic links are followed under the host root ("/dev/null"
 * for a masked file; the last link of the path itself, not of its directories). Never throws.
 */
export async function resolveHostPath(
  hostRoot: string,
  hostPath: string,
): Promise<{ ok: true; path: string } | { ok: false; missing: boolean; error: ProbeError }> {
  const root = hostRoot.replace(/\/+$/, "");
  let p = hostPath;
  for (let hop = 0; hop <= MAX_LINKS; hop++) {
    if (p === "/dev/null") return { ok: true, path: p };
    let st;
    try {
      st = await lstat(`${root}${p}`);
    } catch (e) {
      return fail(hostPath, e);
    }
    if (!st.isSymbolicLink()) return { ok: true, path: p };
    let target;
    try {
      target = await readlink(`${root}${p}`);
    } catch (e) {
      return fail(hostPath, e);
    }
    p = posix.normalize(target.startsWith("/") ? target : posix.join(posix.dirname(p), target));
  }
  return {
    ok: false,
    missing: false,
    error: { kind: "io", message: `${hostPath}: more than ${MAX_LINKS} symbolic links`, command: hostPath },
  };
}

/**
 * Reads a host file by its host path, following symbolic links under the host root (a link to
 * /dev/null, systemd's way to mask a file, reads as masked and empty). Never throws.
 */
export async function readHostFile(
  hostRoot: string,
  hostPath: string,
  maxBytes: number,
): Promise<HostFileRead> {
  const at = await resolveHostPath(hostRoot, hostPath);
  if (!at.ok) return at;
  if (at.path === "/dev/null") return { ok: true, text: "", masked: true };
  const r = await readTextFile(`${hostRoot.replace(/\/+$/, "")}${at.path}`, maxBytes);
  if (!r.ok) return { ok: false, missing: r.missing, error: { ...r.error, command: hostPath } };
  return { ok: true, text: r.text, masked: false };
}

type HostDirList =
  | { ok: true; missing: false; names: string[] }
  | { ok: true; missing: true }
  | { ok: false; error: ProbeError };

/** The names in a host directory (absent: missing, not a failure); capped, since each is read. */
export async function listHostDir(hostRoot: string, hostDir: string): Promise<HostDirList> {
  let names;
  try {
    names = await readdir(`${hostRoot.replace(/\/+$/, "")}${hostDir}`);
  } catch (e) {
    const f = fail(hostDir, e);
    return f.missing ? { ok: true, missing: true } : { ok: false, error: f.error };
  }
  if (names.length > MAX_ENTRIES) {
    return {
      ok: false,
      error: {
        kind: "output-cap",
        message: `${hostDir} has more than ${MAX_ENTRIES} entries`,
        command: hostDir,
      },
    };
  }
  return { ok: true, missing: false, names: names.sort() };
}
