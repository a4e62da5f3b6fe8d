import { open } from "node:fs/promises";
import type { ProbeError } from "../facts/probe-error.js";

export type ReadResult = { ok: true; text: string } | { ok: false; error: ProbeError; missing: boolean };

/** Reads a text file whole, up to `maxBytes`; never throws. `missing` tells ENOENT from other errors. */
export async function readTextFile(path: string, maxBytes = 1024 * 1024): Promise<ReadResult> {
  let fh;
  try {
    fh = await open(path, "r");
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
    fh = await open(path, "r");
  } catch (e) {
    return fileError(path, e);
  }
  try {
    const buf = Buffer.alloc(256 * 1024);
    let total = 0;
    let pending = "";
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
      pending += decoder.decode(buf.subarray(0, bytesRead), { stream: true });
      let start = 0;
      let nl: number;
      while ((nl = pending.indexOf("\n", start)) >= 0) {
        onLine(pending.slice(start, nl));
        start = nl + 1;
      }
      pending = pending.slice(start);
    }
    pending += decoder.decode();
    if (pending.length > 0) onLine(pending);
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
    error: { kind, message: `${path}: ${code ?? String(e)}`, command: path },
  };
}
