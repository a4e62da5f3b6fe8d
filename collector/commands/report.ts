import { ConfigError, errorLine } from "../../common/cli.js";
import { EXIT, type ExitCode } from "../../common/exit-codes.js";
import type { CollectorConfig } from "../config.js";
import { reasonsToFail } from "../report/fail-on.js";
import { gather } from "../gather/gather.js";
import { renderStructured } from "../../common/structured.js";
import { renderCsv } from "../render/csv.js";
import { renderHtml } from "../render/html.js";
import { renderJson } from "../render/json.js";
import { renderMarkdown } from "../render/markdown.js";
import { renderTable } from "../render/table.js";
import { renderJunit } from "../render/junit.js";
import type { FleetReport } from "../report/schema.js";
import { renderChanges } from "../render/changes.js";
import { serviceChanges } from "../plan/changes/service-changes.js";
import { noAgentDeployed } from "../report/scope.js";
import { AcceptFileError, applyAcceptances, parseAcceptFile, type AcceptEntry } from "../report/accept.js";
import { readRegularFile } from "../../common/regular-file.js";
import { useColour } from "../../common/colour.js";

/** A progress bar on stderr, only on a terminal: piped output stays clean. */
function progressBar(): ((done: number, total: number) => void) | undefined {
  if (!process.stderr.isTTY) return undefined;
  return (done, total) => {
    const w = 30;
    const fill = Math.round((w * done) / Math.max(1, total));
    process.stderr.write(`\r[${"#".repeat(fill)}${".".repeat(w - fill)}] ${done}/${total} nodes`);
    if (done === total) process.stderr.write("\r\u001b[K");
  };
}

function render(r: FleetReport, c: CollectorConfig): string {
  switch (c.output) {
    case "json":
      return renderJson(r);
    case "yaml":
      return renderStructured(r, "yaml");
    case "csv":
      return renderCsv(r);
    case "markdown":
      return renderMarkdown(r);
    case "html":
      return renderHtml(r);
    case "junit":
      return renderJunit(r, c.failOn);
    case "table":
    case "text": {
      return `${renderTable(r, useColour(c.color, process.env, process.stdout.isTTY))}\n`;
    }
  }
}

/** 1 MiB: thousands of entries; a wrong file (a log, /dev/zero) is refused, not read. */
const MAX_ACCEPT_FILE_BYTES = 1024 * 1024;

async function readAcceptFile(path: string): Promise<AcceptEntry[]> {
  const r = await readRegularFile(path, MAX_ACCEPT_FILE_BYTES);
  if (!r.ok) throw new ConfigError(`cannot read --accept-file ${path}: ${r.error}`);
  try {
    return parseAcceptFile(r.text, path);
  } catch (e) {
    if (e instanceof AcceptFileError) throw new ConfigError(e.message);
    throw e;
  }
}

/** `proxyscope report`: gather once, print the fleet report, judge it against --fail-on. */
export async function run(c: CollectorConfig): Promise<ExitCode> {
  // Read before the gather: a bad file is a usage error, named before minutes of gathering.
  const accepted = c.acceptFile === null ? null : await readAcceptFile(c.acceptFile);
  const gathered = await gather(c, progressBar());
  if (!gathered.ok) {
    if (gathered.usage) throw new ConfigError(gathered.error);
    process.stderr.write(errorLine("proxyscope", `no report: ${gathered.error}`));
    return EXIT.noReport;
  }
  const res =
    accepted === null
      ? gathered
      : { ...gathered, report: applyAcceptances(gathered.report, accepted, c.acceptFile!) };
  for (const l of res.report.acceptances
    ? [...res.report.acceptances.expired, ...res.report.acceptances.unmatched]
    : [])
    process.stderr.write(errorLine("proxyscope", `--accept-file: ${l}`));
  process.stdout.write(
    c.changes
      ? renderChanges(serviceChanges(res.cluster ?? null, res.report), c.output)
      : render(res.report, c),
  );
  const { nodes, unanswered } = res.report.summary;
  const scope = res.report.scope;
  if (scope?.kind === "cluster-only" && noAgentDeployed(res.report))
    // The API's checks are the answer asked for; the nodes nobody read are listed in the report itself.
    process.stderr.write(
      errorLine(
        "proxyscope",
        `cluster-only preflight: no agent deployed; ${nodes} node(s) not read (docs/first-answers.md)`,
      ),
    );
  else if (nodes > 0 && unanswered === nodes) {
    // Printed for the record of who did not answer, but a report of no node is no report.
    process.stderr.write(errorLine("proxyscope", `no report: none of the ${nodes} node(s) answered`));
    return EXIT.noReport;
  } else if (res.report.partial)
    process.stderr.write(
      errorLine(
        "proxyscope",
        `partial report: ${res.report.summary.unanswered} of ${res.report.summary.nodes} node(s) without a usable report`,
      ),
    );
  const reasons = reasonsToFail(res.report, c.failOn);
  if (reasons.length > 0) {
    // The reasons name nodes and findings as the API and the agents gave them.
    process.stderr.write(
      errorLine(
        "proxyscope",
        `--fail-on ${c.failOn}: ${reasons.length} reached it (${reasons.slice(0, 5).join("; ")}${reasons.length > 5 ? "; ..." : ""})`,
      ),
    );
    return EXIT.findings;
  }
  return EXIT.ok;
}
