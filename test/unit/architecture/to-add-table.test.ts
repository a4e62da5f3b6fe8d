// docs/architecture.md's "To add X, touch these files" table is what a newcomer follows: every path it
// names must exist, a `<placeholder>` segment must be a folder holding such files, and every program's
// stage named in the flow must have a row. A move that leaves the table behind fails here.
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { REPO_ROOT } from "../../helpers/uml.js";

const DOC = readFileSync(join(REPO_ROOT, "docs/architecture.md"), "utf8");
const TOP = [
  "agent/",
  "collector/",
  "common/",
  "test/",
  "bench/",
  "docs/",
  "scripts/",
  "manifests/",
  "mixin/",
  "charts/",
];

function tableRows(): { what: string; cells: string }[] {
  const start = DOC.indexOf("## To add X, touch these files");
  const section = DOC.slice(start, DOC.indexOf("\n## ", start + 1));
  return section
    .split("\n")
    .filter((l) => l.startsWith("| ") && !l.startsWith("| To add") && !l.startsWith("| ---"))
    .map((l) => ({ what: l.split("|")[1]!.trim(), cells: l }));
}

/** Every backticked repository path in a row (a file, a folder, or a pattern with <placeholders>). */
function pathsIn(cells: string): string[] {
  return [...cells.matchAll(/`([^`\s]+)`/g)]
    .map((m) => m[1]!.replace(/[,.;:]+$/, "").replace(/\s*\(.*$/, ""))
    .filter((p) => TOP.some((top) => p.startsWith(top)) || p === "README.md" || p === "CHANGELOG.md");
}

/** A path with `<placeholder>` segments holds when some entry under its fixed prefix matches it. */
function exists(path: string): boolean {
  const clean = path.replace(/\*.*$/, "");
  const i = clean.indexOf("<");
  if (i === -1) return existsSync(join(REPO_ROOT, clean));
  const prefix = clean.slice(0, clean.lastIndexOf("/", i) + 1);
  const dir = join(REPO_ROOT, prefix);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return false;
  const escaped = clean.slice(prefix.length).replace(/[.+?^${}()|[\]\\]/g, "\\$&");
  const pattern = new RegExp(`^${escaped.replace(/<[^>]+>/g, "[^/]+")}$`);
  return readdirSync(dir, { recursive: true }).some((e) => pattern.test(String(e)));
}

t.test("every path the architecture table names exists", async (t) => {
  const rows = tableRows();
  t.ok(rows.length >= 8, `the table was found (${rows.length} rows)`);
  for (const row of rows) {
    const paths = pathsIn(row.cells);
    t.ok(paths.length > 0, `${row.what}: names files`);
    for (const p of paths) t.ok(exists(p), `${row.what}: ${p}`);
  }
});

t.test("the table covers both programs' extension points", async (t) => {
  const what = tableRows().map((r) => r.what);
  for (const must of [
    "a probe",
    "a rule (node check)",
    "a cluster check",
    "a metric (agent)",
    "an output format (agent)",
    "an output format (collector)",
  ])
    t.ok(what.includes(must), `a row for ${must}`);
  t.ok(
    what.some((w) => /collector/.test(w) && /source|API resource/.test(w)),
    "a row for a new collector source or API resource",
  );
});
