// The README opens for users: why (KEP-5495's three releases), then one command each for a cluster, a
// laptop and one node, naming the assets the release workflow publishes at this version; the developer's
// set-up comes later and is still the command CI runs (.ci/run runs the README's test command's steps).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { parse } from "yaml";
import { COLLECTOR_FLAGS } from "../../../collector/config.js";
import { REPO_ROOT } from "../../helpers/uml.js";

const read = (p: string) => readFileSync(join(REPO_ROOT, p), "utf8");
const readme = read("README.md");
const version = (JSON.parse(read("package.json")) as { version: string }).version;
const at = (s: string | RegExp) => (typeof s === "string" ? readme.indexOf(s) : readme.search(s));

// The page still opens with the two commands that set up a fresh Debian machine (scan it; run the tests):
// they come right after the why, before the three ways in for a cluster, a laptop and one node.
t.test("the opening: why, the two set-up commands, then the three ways in", async (t) => {
  const dev = at("## Develop and test");
  t.ok(dev > 0, "a development section");
  for (const release of ["**1.37**", "**1.40**", "**1.43**"]) {
    t.ok(at(release) > 0 && at(release) < at("## Start here"), `${release} in the why`);
  }
  t.ok(at("## Start here") < at("## What it is"), "start here comes first");
  const helmUrl = `https://github.com/proxyscope/proxyscope/releases/download/v${version}/proxyscope-${version}.tgz`;
  const krewUrl = `https://github.com/proxyscope/proxyscope/releases/download/v${version}/proxyscope.yaml`;
  for (const [what, cmd] of [
    ["a cluster", `helm install proxyscope ${helmUrl}`],
    ["a laptop", `kubectl krew install --manifest-url ${krewUrl}`],
    ["one node", "kubectl proxyscope scan-node NODE"],
  ] as const) {
    t.ok(at(cmd) > 0 && at(cmd) < at("## What it is"), `${what}: ${cmd}`);
  }
  t.ok("scan-node" in COLLECTOR_FLAGS, "scan-node is a collector command");
  const scanHere = at("scripts/setup-debian.sh && npm ci && npm run build && node dist/agent/cli.js scan");
  const tests = at("scripts/setup-debian.sh --test && npm ci && npm test");
  t.ok(scanHere > at("**1.43**") && scanHere < at("helm install"), "scan this machine: first command");
  t.ok(tests > scanHere && tests < at("helm install"), "run the tests: second command");
  t.ok(at(/\bapt(-get)?\b|\bgcc\b/) > dev, "apt and the compiler only under Develop and test");
  t.ok(at("## Benchmarks") > dev, "the benchmark tables after it");
});

t.test("the release publishes what the opening installs", async (t) => {
  const wf = read(".github/workflows/release.yml");
  t.match(wf, /"assets\/chart\/proxyscope-\$\{VERSION\}\.tgz"/, "the chart archive, proxyscope-VERSION.tgz");
  t.match(wf, /assets\/plugins\/proxyscope\.yaml/, "krew's manifest, proxyscope.yaml");
  const values = parse(read("charts/proxyscope/values.yaml")) as { image: { tag: string } };
  t.equal(values.image.tag, "", "the chart's image tag follows its appVersion, this version");
});

t.test("the README's test command is the one CI runs", async (t) => {
  t.match(readme, /^scripts\/setup-debian\.sh --test && npm ci && npm test$/m);
  t.match(
    readme,
    /^scripts\/setup-debian\.sh && npm ci && npm run build && node dist\/agent\/cli\.js scan$/m,
  );
  const ci = read(".ci/run")
    .split("\n")
    .filter((l) => l.trim() && !l.trim().startsWith("#"));
  const step = (re: RegExp) => ci.findIndex((l) => re.test(l.trim()));
  const setup = step(/^scripts\/setup-debian\.sh --test$/);
  const npmCi = step(/^npm ci\b/);
  const test = step(/^npm test$/);
  t.ok(
    setup >= 0 && npmCi > setup && test > npmCi,
    "setup-debian.sh --test, npm ci, npm test, in that order",
  );
});
