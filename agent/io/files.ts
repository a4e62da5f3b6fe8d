import { constants } from "node:fs";
import { open } from "node:fs/promises";
import type { ProbeError } from "../facts/probe-error.js";
import { LineSplitter, MAX_LINE_BYTES } from "./lines.js";

// O_NONBLOCK: a FIFO (or other special file) put where a /proc or host file should be must not block
// a libuv thread-pool thread in open() forever; it is refused as not a regular file instead.
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

async function openRegular(path: string) {
  const fh = await open(path, OPEN_FLAGS);
  const st = await fh.stat().catch(async (e: unknown) => {
    await fh.close();
    throw e;
  });
  if (!st.isFile()) {
    await fh.close();
    throw Object.assign(new Error("not a regular file"), { code: "ENOTREG" });
  }
  return { fh, size: st.size };
}

// A file on disk that is already bigger than the cap is refused without reading it; /proc and /sys
// files report size 0, so for them the byte count while reading is the cap.
function tooBig(
  path: string,
  size: number,
  maxBytes: number,
): { ok: false; error: ProbeError; missing: false } | null {
  if (size <= maxBytes) return null;
  return {
    ok: false,
    missing: false,
    error: {
      kind: "output-cap",
      message: `${path} is larger than ${maxBytes} bytes (${size})`,
      command: path,
    },
  };
}

export type ReadResult = { ok: true; text: string } | { ok: false; error: ProbeError; missing: boolean };

/** Reads a text file whole, up to `maxBytes`; never throws. `missing` tells ENOENT from other errors. */
export async function readTextFile(path: string, maxBytes = 1024 * 1024): Promise<ReadResult> {
  let fh;
  try {
    const opened = await openRegular(path);
    fh = opened.fh;
    const big = tooBig(path, opened.size, maxBytes);
    if (big) {
      await fh.close();
      return big;
    }
  } catch (e) {
    return fileError(path, e);
  }
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    const buf = Buffer.alloc(64 * 1024);
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > maxBytes) {
        return {
          ok: false,
          missing: false,
          error: { kind: "output-cap", message: `${path} is larger than ${maxBytes} bytes`, command: path },
        };
      }
      chunks.push(Buffer.from(buf.subarray(0, bytesRead)));
    }
    return { ok: true, text: Buffer.concat(chunks).toString("utf8") };
  } catch (e) {
    return fileError(path, e);
  } finally {
    await fh.close();
  }
}

/** Streams a file line by line (for /proc/net/ip_vs, 7 MB on a 10,000-Service node) with a byte cap. */
export async function readLines(
  path: string,
  onLine: (line: string) => void,
  maxBytes: number,
): Promise<{ ok: true } | { ok: false; error: ProbeError; missing: boolean }> {
  let fh;
  try {
    const opened = await openRegular(path);
    fh = opened.fh;
    const big = tooBig(path, opened.size, maxBytes);
    if (big) {
      await fh.close();
      return big;
    }
  } catch (e) {
    return fileError(path, e);
  }
  try {
    const buf = Buffer.alloc(256 * 1024);
    let total = 0;
    const lines = new LineSplitter(onLine);
    const decoder = new TextDecoder("utf-8");
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > maxBytes) {
        return {
          ok: false,
          missing: false,
          error: { kind: "output-cap", message: `${path} is larger than ${maxBytes} bytes`, command: path },
        };
      }
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
    return fileError(path, e);
  } finally {
    await fh.close();
  }
}

function fileError(path: string, e: unknown): { ok: false; error: ProbeError; missing: boolean } {
  const code = (e as NodeJS.ErrnoException).code;
  const missing = code === "ENOENT" || code === "ENOTDIR";
  const kind = code === "EACCES" || code === "EPERM" ? "not-permitted" : "io";
  return {
    ok: false,
    missing,
    error: {
      kind,
      message: `${path}: ${code === "ENOTREG" ? "not a regular file" : (code ?? String(e))}`,
      command: path,
    },
  };
}
