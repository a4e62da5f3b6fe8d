// The soft descriptor limit comes from /proc/self/limits through the capped reader: a file past the
// cap, or not a regular file, is refused unread with its reason named, and the fixed cap applies.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t from "tap";
import { readSoftFdLimit, softFdLimit } from "../../../common/connection-limits.js";

t.test("a limits file past the cap is refused, named, not read", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-fdlimit-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const f = join(dir, "limits");
  const line = "Max open files            1024                 524288               files     \n";
  writeFileSync(f, line + "x".repeat(1024 * 1024));
  t.equal(softFdLimit(f), null, "too big: the fixed cap, not a number read from it");
  t.match(readSoftFdLimit(f), { ok: false, error: new RegExp(`^${f}: too-big: larger than`) });
  t.match(readSoftFdLimit(dir), { ok: false, error: /not-regular/ }, "a directory is not read");
  t.match(readSoftFdLimit(join(dir, "missing")), { ok: false, error: /missing/ });
  writeFileSync(f, line);
  t.same(readSoftFdLimit(f), { ok: true, limit: 1024 });
  t.equal(softFdLimit(f), 1024);
});
