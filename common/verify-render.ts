import { terminalSafe as safe } from "./escape.js";
import type { VerifyCheck, VerifyResult } from "./verify-result.js";

function word(c: VerifyCheck): string {
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
export function renderVerify(v: VerifyResult): string {
  const lines = v.checks.map((c) => `${c.name.padEnd(46)} ${word(c)}`);
  lines.push(`verify ${safe(v.node)}: ${v.passed ? "PASS" : "FAIL"}`);
  return lines.join("\n");
}
