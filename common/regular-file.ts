import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { LineSplitter, MAX_LINE_BYTES } from "./lines.js";

// The one way both programs read a file they are given (a config, a certificate, a snapshot, a /proc
// or host file): non-blocking, so a FIFO cannot hang open(); regular files only, so /dev/zero or a
// directory is refused before a byte is read; and capped, so nothing is read without bound.
// readRegularFile/readRegularBytes say why in a FileRefusal; readTextFile and readLines, the agent's
// reads of host and /proc files, say it as a probe's named error (FileReadError).

/** Why a file was not read. `missing`: ENOENT/ENOTDIR, which some callers treat as "none yet". */
type FileRefusal = "missing" | "not-permitted" | "not-regular" | "too-big" | "untrusted" | "symlink" | "io";

export interface FileFailure {
  ok: false;
  reason: FileRefusal;
  /** What went wrong, without the path (callers name the file their own way). */
  error: string;
}

interface OpenOptions {
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
async function openRegular(
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

/**
 * Reads a small regular file whole, up to `maxBytes`, as UTF-8 text, synchronously; never throws. For
 * the few reads made where nothing can wait (a server's limits, set as it is built); the same refusals.
 */
export function readRegularFileSync(
  path: string,
  maxBytes: number,
): { ok: true; text: string } | FileFailure {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    return errnoFailure(e, false);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return failure("not-regular", "not a regular file");
    if (st.size > maxBytes) return failure("too-big", `larger than ${maxBytes} bytes (${st.size})`);
    // One byte past the cap tells "exactly the cap" from "more" (/proc files report size 0).
    const buf = Buffer.alloc(maxBytes + 1);
    let total = 0;
    for (;;) {
      const n = readSync(fd, buf, total, buf.length - total, null);
      if (n === 0) break;
      total += n;
      if (total > maxBytes) return failure("too-big", `larger than ${maxBytes} bytes`);
    }
    return { ok: true, text: buf.subarray(0, total).toString("utf8") };
  } catch (e) {
    return errnoFailure(e, false);
  } finally {
    try {
      closeSync(fd);
    } catch {
      // Already read or refused: a failed close changes neither.
    }
  }
}

/**
 * A file not read, as the agent's probes name it: the kind, the file in the message, and the file as
 * the command to look at by hand. Its shape is the agent's ProbeError's (agent/facts/probe-error.ts).
 */
interface FileReadError {
  kind: "output-cap" | "not-permitted" | "io";
  message: string;
  command: string;
}

/** A read that failed; `missing` tells ENOENT/ENOTDIR (often "none yet") from the other failures. */
type FileReadFailure = { ok: false; error: FileReadError; missing: boolean };

type ReadResult = { ok: true; text: string } | FileReadFailure;

/** Reads a text file whole, up to `maxBytes` (1 MiB unless told); never throws. */
export async function readTextFile(
  path: string,
  maxBytes = 1024 * 1024,
  opts: OpenOptions = {},
): Promise<ReadResult> {
  const r = await readRegularFile(path, maxBytes, opts);
  return r.ok ? r : fileError(path, r);
}

/** Streams a file line by line (for /proc/net/ip_vs, 7 MB on a 10,000-Service node) with a byte cap. */
export async function readLines(
  path: string,
  onLine: (line: string) => void,
  maxBytes: number,
): Promise<{ ok: true } | FileReadFailure> {
  const opened = await openRegular(path, maxBytes);
  if (!opened.ok) return fileError(path, opened);
  const { fh } = opened;
  try {
    const buf = Buffer.alloc(256 * 1024);
    let total = 0;
    const lines = new LineSplitter(onLine);
    const decoder = new TextDecoder("utf-8");
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > maxBytes) return fileError(path, failure("too-big", `larger than ${maxBytes} bytes`));
      if (!lines.push(decoder.decode(buf.subarray(0, bytesRead), { stream: true }))) {
        return {
          ok: false,
          missing: false,
          error: {
            kind: "output-cap",
            message: `${path} has a line longer than ${MAX_LINE_BYTES} bytes`,
            command: path,
          },
        };
      }
    }
    lines.push(decoder.decode());
    lines.end();
    return { ok: true };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return fileError(path, failure("io", code ?? String(e)));
  } finally {
    await fh.close().catch(() => undefined);
  }
}

function fileError(path: string, f: FileFailure): FileReadFailure {
  const kind = f.reason === "too-big" ? "output-cap" : f.reason === "not-permitted" ? "not-permitted" : "io";
  const message = f.reason === "too-big" ? `${path} is ${f.error}` : `${path}: ${f.error}`;
  return { ok: false, missing: f.reason === "missing", error: { kind, message, command: path } };
}
