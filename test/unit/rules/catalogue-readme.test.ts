import t from "tap";
import { readFileSync } from "node:fs";
import { FINDING_IDS, FINDING_NEEDS } from "../../../agent/rules/catalogue.js";
import { CLUSTER_FINDING_IDS } from "../../../collector/rules/catalogue.js";

// The README's tables of checks are the user's reference: they must name exactly the ids the rules and
// the cluster checks raise, each linked to its page, and say what each node finding's rule reads (its
// declared needs) so a reader knows which unread fact leaves the finding unproven.
const root = new URL("../../../", import.meta.url);
const readme = readFileSync(new URL("README.md", root), "utf8");
const section = (from: string, to: string) => readme.slice(readme.indexOf(from), readme.indexOf(to));
const ROW = /^\| \[`([a-z0-9-]+)`\]\(docs\/findings\/([a-z0-9-]+)\.md\) \|(.*)\|$/gm;
const rows = (text: string) =>
  [...text.matchAll(ROW)].map((m) => ({ id: m[1]!, page: m[2]!, cells: m[3]!.split(" | ") }));

const nodeRows = rows(section("## The checks", "### Cluster checks"));
const clusterRows = rows(section("### Cluster checks", "## More"));

t.test("node findings", async (t) => {
  const emitted = new Set<string>(FINDING_IDS);
  const documented = new Set(nodeRows.map((r) => r.id));
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
  for (const r of nodeRows) {
    t.equal(r.page, r.id, `${r.id} links its own page`);
    t.equal(r.cells.length, 5, `${r.id}: severity, when, true when, does not apply when, reads`);
    const reads = [...(r.cells[4] ?? "").matchAll(/`([A-Za-z0-9]+)`/g)].map((m) => m[1]!);
    t.same(
      reads,
      FINDING_NEEDS.get(r.id as never) ?? [],
      `${r.id}: "reads" is what its rule declares it needs`,
    );
    t.ok((r.cells[3] ?? "").trim().length > 0, `${r.id}: says when it does not apply`);
  }
});

t.test("cluster findings", async (t) => {
  const raised = new Set<string>(CLUSTER_FINDING_IDS);
  const documented = new Set(clusterRows.map((r) => r.id));
  t.ok(raised.size > 15, "the cluster checks were found");
  t.same(
    [...raised].filter((id) => !documented.has(id)).sort(),
    [],
    "every cluster id is in the README's table",
  );
  t.same(
    [...documented].filter((id) => !raised.has(id)).sort(),
    [],
    "the table names no id the checks do not raise",
  );
  for (const r of clusterRows) {
    t.equal(r.page, r.id, `${r.id} links its own page`);
    t.equal(r.cells.length, 3, `${r.id}: severity, true when, does not apply when`);
  }
});
