import t from "tap";
import { readdirSync, readFileSync } from "node:fs";
import { renderJson } from "../../../collector/render/json.js";
import { renderMarkdown } from "../../../collector/render/markdown.js";
import { goldenFleets } from "../../helpers/cluster-scenarios.js";
import { matchGolden } from "../../helpers/golden.js";

// The fleet report as JSON (what tooling parses) and Markdown (what people paste), for fleets that
// between them raise every cluster finding: ids, severities, titles, evidence and remedies are the wire
// contract, so any change to them shows up here as a diff to accept on purpose (UPDATE_GOLDEN=1).
const fleets = goldenFleets();

for (const [name, report] of fleets) {
  t.test(name, async (t) => {
    matchGolden(t, `fleet/${name}.json`, renderJson(report));
    matchGolden(t, `fleet/${name}.md`, renderMarkdown(report));
  });
}

t.test("the fleets raise every cluster finding id", async (t) => {
  const dir = new URL("../../../collector/checks/", import.meta.url);
  const declared = new Set(
    readdirSync(dir)
      .filter((f) => f.endsWith(".ts"))
      .flatMap((f) => [...readFileSync(new URL(f, dir), "utf8").matchAll(/\bid: "(cluster-[a-z0-9-]+)"/g)])
      .map((m) => m[1]!),
  );
  const raised = new Set(fleets.flatMap(([, r]) => r.clusterFindings.map((f) => f.id)));
  t.ok(declared.size > 15, "the cluster ids were found");
  t.same([...declared].filter((id) => !raised.has(id)).sort(), [], "every id is in some golden fleet");
});
