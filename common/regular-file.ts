import { constants } from "node:fs";
import { open } from "node:fs/promises";

/**
 * Reads a regular file whole, up to `maxBytes`; never throws. O_NONBLOCK so a FIFO cannot hang open(),
 * and anything that is not a regular file (/dev/zero, a directory) is refused before a byte is read.
 */
export async function readRegularFile(
  path: string,
  maxBytes: number,
): Promise<{ ok: true; text: string } | { ok: false; error: string }> {
  let fh;
  try {
    fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) return { ok: false, error: "not a regular file" };
    if (st.size > maxBytes) return { ok: false, error: `larger than ${maxBytes} bytes (${st.size})` };
    const chunks: Buffer[] = [];
    let total = 0;
    const buf = Buffer.alloc(64 * 1024);
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > maxBytes) return { ok: false, error: `larger than ${maxBytes} bytes` };
      chunks.push(Buffer.from(buf.subarray(0, bytesRead)));
    }
    return { ok: true, text: Buffer.concat(chunks).toString("utf8") };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  } finally {
    await fh.close();
  }
}
