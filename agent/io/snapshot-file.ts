import { randomBytes } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { lstat, open, realpath, rename, unlink } from "node:fs/promises";
import { dirname, basename, join, resolve, sep } from "node:path";
import { readRegularFile } from "../../common/regular-file.js";

// The parity snapshot decides whether a node lost Services in the switch. A snapshot someone else could
// write (another user, through a directory others can write, or a symlink planted at its path) could
// raise a false loss or hide a real one, so it is trusted only when nobody but this agent's user (or
// root) could have put it there: the file, its directory and every directory above.

type WriteResult = { ok: true; bytes: number } | { ok: false; why: string };
type SnapshotRead =
  { ok: true; text: string } | { ok: false; missing: true } | { ok: false; missing: false; why: string };

const euid = () => process.geteuid?.() ?? 0;
const trustedOwner = (uid: number) => uid === euid() || uid === 0;
const ownerWhy = (what: string, uid: number) =>
  `${what} is owned by uid ${uid}, not by this agent's user (uid ${euid()}) or root`;
const mode = (st: Stats) => `mode ${(st.mode & 0o7777).toString(8).padStart(4, "0")}`;
const GROUP_OR_OTHER_WRITE = 0o022;
const STICKY = 0o1000;

/** Every directory from / down to `dir` (absolute). */
function chain(dir: string): string[] {
  const parts = dir.split(sep).filter((p) => p !== "");
  return ["/", ...parts.map((_, i) => `/${parts.slice(0, i + 1).join("/")}`)];
}

/**
 * Why the directory holding a snapshot cannot be trusted, or null. The directory itself: owned by us or
 * root and writable by nobody else (a sticky one too: others could still create the path first). The
 * ones above: the same, except that a sticky world-writable one (/tmp) is allowed, since nobody else can
 * rename or remove what we own in it. Checked on the path as given and on the path its symlinks lead to.
 * `holdsIt` false: judging an ancestor of a directory that is not there.
 *
 * By path, not on an open descriptor (Node has no openat): it holds because what it requires, that
 * nobody but us or root can write any directory on the way, is also what keeps anyone else from
 * renaming or replacing one of them between this check and the open; the file itself is judged on
 * its descriptor (readSnapshotFile), so a hard link to another user's file is refused by its owner.
 */
async function untrustedDirectory(dir: string, holdsIt = true): Promise<string | null | "missing"> {
  let real: string;
  try {
    real = await realpath(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR") return `directory ${dir}: ${code ?? (e as Error).message}`;
    // Absent is "none taken" only where nobody else could have removed it: the nearest directory
    // that is there is judged as one above (a sticky one keeps what we made in it).
    const parent = dirname(resolve(dir));
    if (parent === resolve(dir)) return "missing";
    return (await untrustedDirectory(parent, false)) ?? "missing";
  }
  for (const [path, final] of [resolve(dir), real].flatMap((d) =>
    chain(d).map((p, i, all) => [p, i === all.length - 1] as const),
  )) {
    let st: Stats;
    try {
      st = await lstat(path);
    } catch (e) {
      return `directory ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`;
    }
    if (!trustedOwner(st.uid)) return ownerWhy(`directory ${path}`, st.uid);
    // A symlink's own mode means nothing; where it leads is checked on the real path.
    if (st.isSymbolicLink()) continue;
    const othersWrite = (st.mode & GROUP_OR_OTHER_WRITE) !== 0;
    const sticky = (st.mode & STICKY) !== 0;
    if (othersWrite && ((final && holdsIt) || !sticky))
      return `directory ${path} is writable by group or others (${mode(st)}): another user could put or replace the snapshot`;
  }
  return null;
}

function untrustedFile(st: Stats): string | null {
  if (!trustedOwner(st.uid)) return ownerWhy("the file", st.uid);
  if ((st.mode & GROUP_OR_OTHER_WRITE) !== 0) return `the file is writable by group or others (${mode(st)})`;
  return null;
}

/**
 * Reads the snapshot only when it can be trusted (above), never through a symlink (O_NOFOLLOW) and
 * judging the opened file itself (fstat), so nothing can be swapped in between the check and the read.
 */
export async function readSnapshotFile(path: string, maxBytes: number): Promise<SnapshotRead> {
  const dirWhy = await untrustedDirectory(dirname(path));
  // No directory, no snapshot: as absent as a missing file.
  if (dirWhy === "missing") return { ok: false, missing: true };
  if (dirWhy !== null) return { ok: false, missing: false, why: `untrusted snapshot, not read: ${dirWhy}` };
  const r = await readRegularFile(path, maxBytes, { noFollow: true, trust: untrustedFile });
  if (r.ok) return r;
  if (r.reason === "missing") return { ok: false, missing: true };
  const untrusted = r.reason === "untrusted" || r.reason === "symlink";
  return {
    ok: false,
    missing: false,
    why: `${untrusted ? "untrusted snapshot, not read: " : ""}${path}: ${r.error}`,
  };
}

/**
 * Writes `text` to `path` whole or not at all: a temp file beside it (O_EXCL, never following a link),
 * fsync, then rename over the old one, so a reader or an agent killed half way never sees half a file.
 * Refuses text over `maxBytes`: the snapshot's size is bounded on disk as well as in memory. Refuses a
 * directory others could write: what is written there could be replaced before it is read.
 */
export async function writeFileAtomic(path: string, text: string, maxBytes: number): Promise<WriteResult> {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > maxBytes) return { ok: false, why: `${bytes} bytes is over the ${maxBytes}-byte limit` };
  const dirWhy = await untrustedDirectory(dirname(path));
  if (dirWhy === "missing")
    return { ok: false, why: `not written: directory ${dirname(path)} does not exist` };
  if (dirWhy !== null) return { ok: false, why: `not written: ${dirWhy}` };
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  let fh;
  try {
    fh = await open(
      tmp,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    );
    await fh.writeFile(text, "utf8");
    await fh.sync();
    await fh.close();
    fh = undefined;
    await rename(tmp, path);
    return { ok: true, bytes };
  } catch (e) {
    await fh?.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    return { ok: false, why: `${path}: ${(e as Error).message}` };
  }
}
