import {
  openRegular,
  readRegularFile,
  type FileFailure,
  type OpenOptions,
} from "../../common/regular-file.js";
import type { ProbeError } from "../facts/probe-error.js";
import { LineSplitter, MAX_LINE_BYTES } from "./lines.js";

// The agent's reads of host and /proc files go through the one capped regular-file reader
// (common/regular-file.ts); this file turns its refusals into the probes' named errors.

export type ReadResult = { ok: true; text: string } | { ok: false; error: ProbeError; missing: boolean };

/** Reads a text file whole, up to `maxBytes`; never throws. `missing` tells ENOENT from other errors. */
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
): Promise<{ ok: true } | { ok: false; error: ProbeError; missing: boolean }> {
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
      if (total > maxBytes)
        return fileError(path, { ok: false, reason: "too-big", error: `larger than ${maxBytes} bytes` });
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
    return fileError(path, { ok: false, reason: "io", error: code ?? String(e) });
  } finally {
    await fh.close().catch(() => undefined);
  }
}

function fileError(path: string, f: FileFailure): { ok: false; error: ProbeError; missing: boolean } {
  const kind = f.reason === "too-big" ? "output-cap" : f.reason === "not-permitted" ? "not-permitted" : "io";
  const message = f.reason === "too-big" ? `${path} is ${f.error}` : `${path}: ${f.error}`;
  return { ok: false, missing: f.reason === "missing", error: { kind, message, command: path } };
}
