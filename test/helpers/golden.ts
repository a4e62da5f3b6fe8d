import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import type { Test } from "tap";

// A golden file holds output as it was accepted; a change to it is a change to what users and their
// tooling read, so it is made on purpose (UPDATE_GOLDEN=1) and shows up in review as a diff.
const FIXTURES = new URL("../fixtures/golden/", import.meta.url);

export const UPDATING = process.env.UPDATE_GOLDEN === "1";

/** `actual` equals test/fixtures/golden/<name>; with UPDATE_GOLDEN=1 it becomes the golden file instead. */
export function matchGolden(t: Test, name: string, actual: string): void {
  const path = fileURLToPath(new URL(name, FIXTURES));
  if (UPDATING) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, actual);
    return;
  }
  let golden: string;
  try {
    golden = readFileSync(path, "utf8");
  } catch {
    t.fail(`no golden file test/fixtures/golden/${name}: run this test with UPDATE_GOLDEN=1 to write it`);
    return;
  }
  t.equal(actual, golden, `${name} is unchanged (UPDATE_GOLDEN=1 accepts a deliberate change)`);
}
