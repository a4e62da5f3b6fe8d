// The demo's sample node reports (collector/demo/*.json) are made by the agent's own rules from the
// review fleet and the keepalived profile (test/helpers/demo-fleet.ts), not written by hand: this
// regenerates them and fails when the shipped ones differ (UPDATE_GOLDEN=1 writes them), checks the
// fleet is the mix the demo promises, and that collector/demo/samples.ts ships exactly these files.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import t from "tap";
import { demoReports } from "../../helpers/demo-fleet.js";
import { UPDATING } from "../../helpers/golden.js";
import { DEMO_SAMPLE_FILES, demoFiles } from "../../../collector/demo/samples.js";
import { inlineJudge } from "../../../collector/gather/answer-judge.js";
import { readSavedReports } from "../../../collector/sources/files.js";

const DIR = new URL("../../../collector/demo/", import.meta.url);
const made = demoReports();

t.test("the shipped samples are the generated ones", async (t) => {
  for (const { file, report } of made) {
    const text = `${JSON.stringify(report, null, 2)}\n`;
    if (UPDATING) writeFileSync(new URL(file, DIR), text);
    else t.equal(readFileSync(new URL(file, DIR), "utf8"), text, `${file} is as generated`);
  }
  const shipped = readdirSync(DIR)
    .filter((f) => f.endsWith(".json"))
    .sort();
  t.same(shipped, made.map((m) => m.file).sort(), "no other sample in the folder");
  t.same([...DEMO_SAMPLE_FILES].sort(), shipped, "samples.ts imports every sample");
});

t.test("a small mixed fleet: ready, blocked by foreign IPVS, after the switch", async (t) => {
  const listed = await demoFiles();
  t.ok(listed.ok);
  if (!listed.ok) return;
  const obs = await readSavedReports(listed.files, inlineJudge);
  t.equal(obs.length, made.length);
  t.ok(
    obs.every((o) => o.outcome === "ok"),
    "every sample is a NodeReport this collector reads",
  );
  const verdicts = obs.map((o) => o.verdict);
  t.ok(verdicts.filter((v) => v === "ready").length >= 2, `some ready: ${verdicts.join(" ")}`);
  const foreign = obs.filter((o) => o.findings.some((f) => f.id === "foreign-ipvs-virtual-servers"));
  t.equal(foreign.length, 1);
  t.equal(foreign[0]?.verdict, "blocked");
  t.ok(
    obs.some((o) => o.phase === "nftables" && o.verdict === "clean"),
    "one after the switch",
  );
  t.ok(
    obs.some((o) => o.findings.some((f) => f.id === "kube-ipvs0-black-hole")),
    "one black hole left by kube-ipvs0",
  );
});
