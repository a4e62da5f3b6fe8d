import { VERSION as COLLECTOR_VERSION } from "../../common/version.js";
import { demoFiles } from "../demo/samples.js";
import type { ClusterFacts } from "../report/cluster-facts.js";
import type { NodeObservation } from "../report/schema.js";
import { savedScope, withScope } from "../report/scope.js";
import { rollup } from "../plan/rollup.js";
import { listSavedFiles, readSavedReports } from "../sources/files.js";
import { AnswerJudge } from "./answer-judge.js";
import type { GatherConfig, GatherResult } from "./types.js";

/**
 * `report --from-files` and `--demo`: saved node reports, judged on the same heap-limited thread as
 * agents' answers, rolled up against the API's facts when a kubeconfig was named (`cluster`).
 */
export async function gatherSaved(
  cfg: GatherConfig,
  cluster: ClusterFacts | null,
  started: Date,
  onProgress?: (done: number, total: number) => void,
): Promise<GatherResult> {
  const listed = cfg.demo ? await demoFiles() : await listSavedFiles(cfg.fromFiles ?? []);
  if (!listed.ok) return listed;
  const judge = new AnswerJudge();
  let observations: NodeObservation[];
  try {
    observations = await readSavedReports(listed.files, judge, onProgress);
  } finally {
    await judge.close();
  }
  const rolled = rollup({
    source: "static",
    collectorVersion: COLLECTOR_VERSION,
    generatedAt: started,
    cluster,
    observations,
    missingOutcome: "no-data",
    missingReason: "no saved report for this node among --from-files",
    targetVersion: cfg.targetVersion,
  });
  const from = cfg.demo ? "collector/demo" : (cfg.fromFiles ?? []).join(" ");
  return {
    ok: true,
    cluster,
    report: withScope(rolled, savedScope(rolled, cfg.demo ? "demo" : "saved-files", from)),
  };
}
