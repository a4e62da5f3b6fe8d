import { terminalSafe as safe } from "./escape.js";
import type { VerifyAnswer } from "./verify-result.js";

type Check = VerifyAnswer["checks"][number];

function word(c: Check): string {
  const d = c.detail === null ? "" : safe(c.detail);
  switch (c.status) {
    case "ok":
      return d === "" ? "ok" : `ok (${d})`;
    case "fail":
      return `FAIL (${d})`;
    case "not-run":
      return `FAIL (not run: ${d})`;
    case "skipped":
      return `skipped (${d})`;
  }
}

/** One line per check, like the guide's verify.sh (`printf '%-46s %s\n'`), then the outcome. */
export function renderVerify(v: VerifyAnswer, unknownChecks: readonly string[] = []): string {
  // A line a newer agent added: shown as the agent worded it, and marked, never dropped.
  const unknown = new Set(unknownChecks);
  const lines = v.checks.map(
    (c) =>
      `${safe(c.name).padEnd(46)} ${word(c)}${unknown.has(c.id) ? " [unknown to this collector (agent newer)]" : ""}`,
  );
  lines.push(`verify ${safe(v.node)}: ${v.passed ? "PASS" : "FAIL"}`);
  return lines.join("\n");
}
