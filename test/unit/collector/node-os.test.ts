// The node's OS is in the agent's report (facts.osRelease, the host's os-release): the fleet report
// shows it even when no API server was asked, and the Node object's osImage wins when there is one.
import t from "tap";
import { fleetDigestOf } from "../../../agent/contract.js";
import { observationFromDigest } from "../../../collector/gather/observe.js";
import { renderTable } from "../../../collector/render/table.js";
import { rollup } from "../../../collector/plan/rollup.js";
import { emptyFacts, noKernelState } from "../../helpers/facts.js";
import { reportOf } from "../../helpers/reports.js";

const osRelease = {
  source: "/etc/os-release",
  id: "ubuntu",
  idLike: ["debian"],
  versionId: "24.04",
  versionCodename: "noble",
  prettyName: "Ubuntu 24.04.1 LTS",
};

const fleetOf = (withOs: boolean) =>
  rollup({
    source: "static",
    collectorVersion: "0.1.0",
    generatedAt: new Date("2026-11-29T12:00:00Z"),
    cluster: null,
    observations: [
      observationFromDigest(
        fleetDigestOf(reportOf(emptyFacts({ ...noKernelState, ...(withOs ? { osRelease } : {}) }))),
        "http://127.0.0.1:9102",
      ),
    ],
    missingOutcome: "no-agent",
    targetVersion: null,
  });

t.test("the agent's os-release reaches the node's OS", async (t) => {
  const r = fleetOf(true);
  t.equal(r.nodes[0]!.osImage, "Ubuntu 24.04.1 LTS");
  t.match(renderTable(r, false), /Ubuntu 24\.04\.1 LTS/);
});

t.test("os-release not read stays unknown, not invented", async (t) => {
  t.equal(fleetOf(false).nodes[0]!.osImage, null);
});
