import { parseNodeReport, type ParsedReport } from "../gather/observe.js";

/**
 * The node report in a scan pod's log. The log is the container's stdout and stderr interleaved (the
 * pods/log subresource has no stdout-only read before the PodLogsQuerySplitStreams gate), so a line the
 * agent wrote to stderr may stand before or after the JSON: the report is the whole log, or else the
 * lines from the first one that is `{` to the last one that is `}` (`scan -o json` prints an
 * indented object).
 */
export function reportFromLog(log: string): ParsedReport {
  const whole = parseNodeReport(log);
  if (whole.ok) return whole;
  const lines = log.split("\n");
  const start = lines.indexOf("{");
  const end = lines.lastIndexOf("}");
  if (start < 0 || end < start) return whole;
  const inner = parseNodeReport(lines.slice(start, end + 1).join("\n"));
  return inner.ok ? inner : whole;
}
