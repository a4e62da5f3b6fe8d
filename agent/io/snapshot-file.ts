import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { open, rename, unlink } from "node:fs/promises";
import { dirname, basename, join } from "node:path";

export type WriteResult = { ok: true; bytes: number } | { ok: false; why: string };

/**
 * Writes `text` to `path` whole or not at all: a temp file beside it (O_EXCL, never following a link),
 * fsync, then rename over the old one, so a reader or an agent killed half way never sees half a file.
 * Refuses text over `maxBytes`: the snapshot's size is bounded on disk as well as in memory.
 */
export async function writeFileAtomic(path: string, text: string, maxBytes: number): Promise<WriteResult> {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > maxBytes) return { ok: false, why: `${bytes} bytes is over the ${maxBytes}-byte limit` };
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
