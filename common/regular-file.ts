import { constants, type Stats } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";

// The one way both programs read a file they are given (a config, a certificate, a snapshot, a /proc
// or host file): non-blocking, so a FIFO cannot hang open(); regular files only, so /dev/zero or a
// directory is refused before a byte is read; and capped, so nothing is read without bound.

/** Why a file was not read. `missing`: ENOENT/ENOTDIR, which some callers treat as "none yet". */
export type FileRefusal =
  "missing" | "not-permitted" | "not-regular" | "too-big" | "untrusted" | "symlink" | "io";

export interface FileFailure {
  ok: false;
  reason: FileRefusal;
  /** What went wrong, without the path (callers name the file their own way). */
  error: string;
}

export interface OpenOptions {
  /** Refuse a symlink as the last component (O_NOFOLLOW): for files another user could plant. */
  noFollow?: boolean;
  /** Judges the opened file's own stat (fstat, so no swap between check and read): a reason to refuse, or null. */
  trust?: (st: Stats) => string | null;
}

const failure = (reason: FileRefusal, error: string): FileFailure => ({ ok: false, reason, error });

function errnoFailure(e: unknown, noFollow: boolean): FileFailure {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === "ENOENT" || code === "ENOTDIR") return failure("missing", code);
  if (code === "EACCES" || code === "EPERM") return failure("not-permitted", code);
  // open(2) with O_NOFOLLOW on a symlink fails with ELOOP.
  if (code === "ELOOP" && noFollow) return failure("symlink", "a symlink (refused: not followed)");
  return failure("io", code ?? (e as Error).message);
}

/** Opens a regular file for reading; the caller closes the handle. */
export async function openRegular(
  path: string,
  maxBytes: number,
  opts: OpenOptions = {},
): Promise<{ ok: true; fh: FileHandle; stat: Stats } | FileFailure> {
  const noFollow = opts.noFollow === true;
  let fh: FileHandle;
  try {
    fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | (noFollow ? constants.O_NOFOLLOW : 0));
  } catch (e) {
    return errnoFailure(e, noFollow);
  }
  let refusal: FileFailure | null = null;
  let st: Stats | undefined;
  try {
    st = await fh.stat();
    if (!st.isFile()) refusal = failure("not-regular", "not a regular file");
    else {
      const why = opts.trust?.(st) ?? null;
      if (why !== null) refusal = failure("untrusted", why);
      // A file already bigger than the cap is refused unread; /proc and /sys files report size 0, so
      // for them the count while reading is the cap.
      else if (st.size > maxBytes) refusal = failure("too-big", `larger than ${maxBytes} bytes (${st.size})`);
    }
  } catch (e) {
    refusal = errnoFailure(e, noFollow);
  }
  if (refusal !== null || st === undefined) {
    await fh.close().catch(() => undefined);
    return refusal ?? failure("io", "no stat");
  }
  return { ok: true, fh, stat: st };
}

/** Reads a regular file whole, up to `maxBytes`, as bytes; never throws. */
export async function readRegularBytes(
  path: string,
  maxBytes: number,
  opts: OpenOptions = {},
): Promise<{ ok: true; bytes: Buffer } | FileFailure> {
  const o = await openRegular(path, maxBytes, opts);
  if (!o.ok) return o;
  const { fh } = o;
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    const buf = Buffer.alloc(64 * 1024);
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > maxBytes) return failure("too-big", `larger than ${maxBytes} bytes`);
      chunks.push(Buffer.from(buf.subarray(0, bytesRead)));
    }
    return { ok: true, bytes: Buffer.concat(chunks) };
  } catch (e) {
    return errnoFailure(e, false);
  } finally {
    await fh.close().catch(() => undefined);
  }
}

/** Reads a regular file whole, up to `maxBytes`, as UTF-8 text; never throws. */
export async function readRegularFile(
  path: string,
  maxBytes: number,
  opts: OpenOptions = {},
): Promise<{ ok: true; text: string } | FileFailure> {
  const r = await readRegularBytes(path, maxBytes, opts);
  return r.ok ? { ok: true, text: r.bytes.toString("utf8") } : r;
}
