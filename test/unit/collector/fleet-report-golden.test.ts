import t from "tap";
import { CLUSTER_FINDING_IDS, CLUSTER_FINDINGS } from "../../../collector/rules/catalogue.js";
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

t.test("the fleets raise every cluster finding id, each as its check declares it", async (t) => {
  const raised = fleets.flatMap(([, r]) => r.clusterFindings);
  const ids = new Set(raised.map((f) => f.id));
  t.ok(CLUSTER_FINDING_IDS.length > 15, "the catalogue lists the cluster ids");
  t.same(
    CLUSTER_FINDING_IDS.filter((id) => !ids.has(id)),
    [],
    "every id is in some golden fleet",
  );
  const within = <T>(v: T, spec: T | readonly T[]) => (Array.isArray(spec) ? spec.includes(v) : v === spec);
  for (const f of raised) {
    const spec = CLUSTER_FINDINGS.get(f.id as never);
    t.ok(spec, `${f.id} is in the catalogue`);
    if (!spec) continue;
    t.ok(within(f.severity, spec.severity), `${f.id}: severity ${f.severity} is one it declares`);
    t.ok(within(f.stage, spec.stage), `${f.id}: stage ${f.stage} is the one it declares`);
  }
});
