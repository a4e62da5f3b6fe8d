import { errorLine } from "../../common/cli.js";
import { EXIT, type ExitCode } from "../../common/exit-codes.js";
import { terminalSafe } from "../../common/escape.js";
import { useColour } from "../../common/colour.js";
import { renderStructured } from "../../common/structured.js";
import { renderText } from "../../agent/contract.js";
import type { CollectorConfig } from "../config.js";
import { reportFromLog } from "../parse/scan-log.js";
import { loadKubeConfig } from "../sources/kubernetes/index.js";
import { runScanPod } from "../sources/scan-pod.js";

const say = (m: string) => process.stderr.write(errorLine("proxyscope", m));

/**
 * `proxyscope scan-node NODE`: one node's report without the DaemonSet. One privileged pod on the node
 * runs the agent's scan, its log is the report; the pod is deleted whatever happens, SIGINT and SIGTERM
 * included (they end the wait, not the process, until the pod is deleted). 0 a report printed,
 * 5 none (the pod could not run, failed, timed out, or its log was not a node report).
 */
export async function run(c: CollectorConfig): Promise<ExitCode> {
  if (c.node === null) {
    say("scan-node needs the node's name: proxyscope scan-node NODE");
    return EXIT.usage;
  }
  const kube = loadKubeConfig(c);
  if (!kube.ok) {
    say(kube.error);
    return EXIT.noReport;
  }
  const stop = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    if (!stop.signal.aborted) {
      process.stderr.write(`proxyscope: ${sig}: deleting the scan pod before exiting\n`);
      stop.abort(sig);
    }
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    const ran = await runScanPod(
      kube.value.kc,
      { node: c.node, namespace: c.agentNamespace, image: c.image, waitS: c.waitS, timeoutMs: c.timeoutMs },
      stop.signal,
      (name) =>
        process.stderr.write(
          `proxyscope: scanning node ${terminalSafe(c.node!)} with pod ${c.agentNamespace}/${name}\n`,
        ),
    );
    if (!ran.ok) {
      say(ran.error);
      return EXIT.noReport;
    }
    const { pod, log, deleteError } = ran.value;
    if (deleteError !== null) say(deleteError);
    if (!log.ok) {
      say(`pod ${c.agentNamespace}/${pod}: ${log.error}`);
      return EXIT.noReport;
    }
    const read = reportFromLog(log.value);
    if (!read.ok) {
      say(`pod ${c.agentNamespace}/${pod}: its log is not a node report (${read.outcome}: ${read.reason})`);
      return EXIT.noReport;
    }
    const colour = useColour(c.color, process.env, process.stdout.isTTY);
    process.stdout.write(
      c.output === "json" || c.output === "yaml"
        ? renderStructured(read.report, c.output)
        : `${renderText(read.report, colour)}\n`,
    );
    return EXIT.ok;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}
