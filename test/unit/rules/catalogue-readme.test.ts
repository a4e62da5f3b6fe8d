import t from "tap";
import { readdirSync, readFileSync } from "node:fs";
import { FINDING_IDS } from "../../../agent/rules/catalogue.js";

// The README's table of checks is the user's reference: it must name exactly the ids the rules declare.
const root = new URL("../../../", import.meta.url);
const emitted = new Set<string>(FINDING_IDS);
const readme = readFileSync(new URL("README.md", root), "utf8");
const section = (heading: string) => {
  const start = readme.indexOf(`\n### ${heading}\n`);
  const end = readme.slice(start + 1).search(/\n#{2,3} /);
  return start < 0 ? "" : readme.slice(start, end < 0 ? undefined : start + 1 + end);
};
const rows = (text: string) => new Set([...text.matchAll(/^\| `([a-z0-9-]+)` \|/gm)].map((m) => m[1]!));
const documented = rows(section("The checks"));

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

// The cluster checks' table names exactly the ids the collector's checks raise (read from their source:
// cluster findings have no catalogue of their own).
const checkSources = ["collector/checks", "collector"].flatMap((dir) =>
  readdirSync(new URL(dir, root))
    .filter((f) => f.endsWith(".ts"))
    .map((f) => readFileSync(new URL(`${dir}/${f}`, root), "utf8")),
);
const raised = new Set(
  checkSources.flatMap((src) => [...src.matchAll(/id: "(cluster-[a-z0-9-]+)"/g)].map((m) => m[1]!)),
);
const clusterDocumented = rows(section("Cluster checks"));
t.ok(raised.size > 15, "the cluster checks were found");
t.same(
  [...raised].filter((id) => !clusterDocumented.has(id)).sort(),
  [],
  "every cluster id is in the README's table",
);
t.same(
  [...clusterDocumented].filter((id) => !raised.has(id)).sort(),
  [],
  "the cluster table names no id no check raises",
);
