import t from "tap";
import {
  parseTargetVersion,
  type TargetNode,
  type TargetVersion,
} from "../../../collector/checks/target-version.js";
import { loadConfig } from "../../../collector/config.js";
import type { ClusterFacts } from "../../../collector/report/cluster-facts.js";
import { flagChecks } from "../../../collector/rules/index.js";
import { cfg, facts } from "../../helpers/fleet.js";

const targetVersionFindings = (target: TargetVersion, nodes: TargetNode[], cluster: ClusterFacts | null) =>
  flagChecks(cluster, nodes, target);

// The expectations follow KEP-5495 as kubernetes/enhancements#6120 plans it: gate on by default in 1.37,
// off by default in 1.40 (ipvs mode then fails to start), locked off in 1.43, removed in 1.46.
const fleet = [
  { node: "a", phase: "ipvs" },
  { node: "b", phase: "nftables" },
  { node: "c", phase: null },
];
const v = (s: string) => parseTargetVersion(s)!;
const evidence = (f: ReturnType<typeof targetVersionFindings>[number]) =>
  f.evidence as Record<string, unknown>;

t.test("versions: 1.40, v1.43.0; anything else is refused", async (t) => {
  t.same(parseTargetVersion("1.40"), { text: "1.40", minor: 40 });
  t.same(parseTargetVersion("v1.43.2"), { text: "1.43", minor: 43 });
  for (const bad of ["", "1", "2.0", "1.40.x", "latest", "1.40 "])
    t.equal(parseTargetVersion(bad), null, bad);
});

t.test("1.40 with the gate at its default: ipvs nodes break, the nftables node does not", async (t) => {
  const [f] = targetVersionFindings(v("1.40"), fleet, facts({}, cfg({ mode: "nftables" })));
  t.equal(f!.severity, "critical");
  t.same(evidence(f!).nodesThatBreak, ["a"]);
  t.same(evidence(f!).nodesUnknown, ["c"], "a node that did not answer is unknown, not fine");
  t.match(f!.title, /fails to start/);
});

t.test("1.40 with KubeProxyIPVS=true: still working, at risk until 1.43", async (t) => {
  const [f] = targetVersionFindings(
    v("1.41"),
    fleet.slice(0, 2),
    facts({}, cfg({ mode: "ipvs", featureGates: { KubeProxyIPVS: true } })),
  );
  t.equal(f!.severity, "warning");
  t.same(evidence(f!).nodesAtRisk, ["a"]);
  t.same(evidence(f!).nodesThatBreak, []);
});

t.test("1.43: the gate no longer helps; the config still saying ipvs breaks every restart", async (t) => {
  const [f] = targetVersionFindings(
    v("1.43"),
    [{ node: "b", phase: "nftables" }],
    facts({}, cfg({ mode: "ipvs", featureGates: { KubeProxyIPVS: true } })),
  );
  t.equal(f!.severity, "critical", "no node in ipvs mode, but the ConfigMap would put them back");
  t.equal(evidence(f!).configuredModeIpvs, true);
});

t.test("1.46: a config naming the removed gate is refused", async (t) => {
  const [f] = targetVersionFindings(
    v("1.46"),
    [{ node: "b", phase: "nftables" }],
    facts({}, cfg({ mode: "nftables", featureGates: { KubeProxyIPVS: false } })),
  );
  t.equal(f!.severity, "critical");
  t.match(f!.title, /removed in 1\.46/);
});

t.test("1.37 and before: nothing breaks; no API access is no claim about the config", async (t) => {
  const [f] = targetVersionFindings(v("1.38"), fleet.slice(0, 2), null);
  t.equal(f!.severity, "warning", "ipvs nodes keep working behind the gate");
  const [g] = targetVersionFindings(v("1.36"), fleet.slice(1, 2), null);
  t.equal(g!.severity, "info");
});

t.test("--target-version is checked before anything runs, naming the flag", async (t) => {
  t.same(loadConfig(["--target-version", "1.40"]).targetVersion, { text: "1.40", minor: 40 });
  t.throws(
    () => loadConfig(["--target-version", "soon"]),
    /invalid --target-version: must be a Kubernetes version/,
  );
});
