import t from "tap";
import { readdirSync, readFileSync } from "node:fs";
import { FINDING_IDS } from "../../../agent/rules/catalogue.js";
import { CLUSTER_FINDING_IDS } from "../../../collector/rules/catalogue.js";
import { clusterChecks } from "../../../collector/rules/index.js";
import { findingPagePath, findingPageUrl } from "../../../common/finding-page.js";
import { VERSION } from "../../../common/version.js";
import { facts } from "../../helpers/fleet.js";
import { ipvsNode, judge, NOW } from "../../helpers/rules.js";

// Every finding id has one page, docs/findings/<id>.md, with the same five sections in the same order;
// every page names an id something raises: the agent's and the collector's catalogues, so an id added to
// a rule without a page fails here.
const root = new URL("../../../", import.meta.url);
const dir = new URL("docs/findings/", root);
const SECTIONS = ["What it means", "When it does not apply", "Confirm by hand", "Fix", "References"];

const clusterIds = new Set<string>(CLUSTER_FINDING_IDS);
const ids = new Set<string>([...FINDING_IDS, ...clusterIds]);
const pages = new Set(
  readdirSync(dir)
    .filter((f) => f.endsWith(".md") && f !== "README.md")
    .map((f) => f.slice(0, -3)),
);

t.ok(FINDING_IDS.length > 20 && clusterIds.size > 15, "the node and cluster ids were found");
t.same([...ids].filter((id) => !pages.has(id)).sort(), [], "every finding id has a page");
t.same([...pages].filter((p) => !ids.has(p)).sort(), [], "every page names a finding id");

for (const id of [...ids].filter((i) => pages.has(i)).sort()) {
  const text = readFileSync(new URL(`${id}.md`, dir), "utf8");
  const headings = [...text.matchAll(/^## (.+)$/gm)].map((m) => m[1]!.trim());
  t.same(headings, SECTIONS, `${id}: the five sections, in order, and no other`);
  t.match(text, new RegExp(`^# \`${id}\`$`, "m"), `${id}: titled with its id`);
  for (const s of SECTIONS.slice(0, 4)) {
    const body = text.split(`## ${s}\n`)[1]?.split(/^## /m)[0]?.trim() ?? "";
    t.ok(body.length > 0, `${id}: "${s}" is not empty`);
  }
  const confirm = text.split("## Confirm by hand\n")[1]?.split(/^## /m)[0] ?? "";
  t.match(confirm, /```sh\n[^`]+\n```/, `${id}: "Confirm by hand" gives commands`);
  const refs = text.split("## References\n")[1] ?? "";
  t.match(refs, /^- /m, `${id}: at least one reference`);
  t.notMatch(text, /DESIGN\.md/, `${id}: cites no design file outside the repository`);
  // A Fix that deletes by prefix takes other programs' state too (kube-router's KUBE-SRC-*/KUBE-DST-* sets).
  const fix = text.split("## Fix\n")[1]?.split(/^## /m)[0] ?? "";
  t.notMatch(fix, /grep '\^KUBE-'[^\n]*destroy/, `${id}: "Fix" never deletes by a KUBE- prefix`);
}

t.test("the index lists every page once, node findings and cluster findings apart", async (t) => {
  const index = readFileSync(new URL("README.md", dir), "utf8");
  const listed = (heading: string) =>
    [
      ...(index.split(`## ${heading}\n`)[1]?.split(/^## /m)[0] ?? "").matchAll(
        /^- \[`([^`]+)`\]\(\1\.md\)/gm,
      ),
    ].map((m) => m[1]!);
  const node = listed("Node findings");
  const cluster = listed("Cluster findings");
  t.same([...node].sort(), [...FINDING_IDS].sort(), "Node findings: every node id, once");
  t.same([...cluster].sort(), [...clusterIds].sort(), "Cluster findings: every cluster id, once");
});

t.test("a page's address is derived from its id, and every relative link resolves", async (t) => {
  t.equal(findingPagePath("kube-proxy-free"), "docs/findings/kube-proxy-free.md");
  t.equal(
    findingPageUrl("kube-proxy-free"),
    `https://github.com/proxyscope/proxyscope/blob/v${VERSION}/docs/findings/kube-proxy-free.md`,
    "the release's tag: what a user cites stays what their version said",
  );
  for (const p of [...pages, "README"]) {
    const text = readFileSync(new URL(`${p}.md`, dir), "utf8");
    for (const [, target] of text.matchAll(/\]\((?!https?:)([^)#]+)\)/g)) {
      t.doesNotThrow(() => readFileSync(new URL(target!, new URL(`${p}.md`, dir))), `${p}: ${target} exists`);
    }
  }
});

t.test("a finding's reference is its page, for node and cluster findings", async (t) => {
  const node = judge(ipvsNode(), new Map(), NOW).findings;
  t.ok(node.length > 0, "the ipvs node raises findings");
  for (const f of node) t.equal(f.reference, findingPageUrl(f.id), f.id);
  const cluster = clusterChecks(facts(), [{ node: "a", phase: "ipvs" }]);
  t.ok(cluster.length > 0, "the cluster raises findings");
  for (const f of cluster) t.equal(f.reference, findingPageUrl(f.id), f.id);
  for (const f of [...node, ...cluster]) t.notMatch(f.reference, /[^\x20-\x7e]/, `${f.id}: ASCII only`);
});
