import t from "tap";
import { readFileSync } from "node:fs";
import { FINDING_IDS } from "../../../agent/rules/catalogue.js";

// The README's table of checks is the user's reference: it must name exactly the ids the rules declare.
const root = new URL("../../../", import.meta.url);
const emitted = new Set<string>(FINDING_IDS);
const readme = readFileSync(new URL("README.md", root), "utf8");
const documented = new Set([...readme.matchAll(/^\| `([a-z0-9-]+)` \|/gm)].map((m) => m[1]!));

t.ok(emitted.size > 20, "the rules were found");
t.same(
  [...emitted].filter((id) => !documented.has(id)).sort(),
  [],
  "every finding id is in the README's table",
);
t.same(
  [...documented].filter((id) => !emitted.has(id)).sort(),
  [],
  "the table names no id the rules do not emit",
);
