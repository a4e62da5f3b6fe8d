import type { FleetReport } from "../report/schema.js";

// One row per node, for a spreadsheet or the migration review's tracker: RFC 4180 quoting (a field with a
// comma, quote or line break is quoted, quotes doubled), CRLF line ends.
const COLUMNS = [
  "node",
  "pool",
  "outcome",
  "phase",
  "verdict",
  "findings",
  "highest_severity",
  "kernel",
  "os_image",
  "kubelet_version",
  "internal_ip",
  "listed_by_api",
  "black_holed_addresses",
  "reason",
] as const;

const SEVERITY_ORDER = ["info", "warning", "error", "critical"];

/**
 * A cell as text. A node name or label starting with = + - @ (or a tab/CR) is prefixed with ' so a
 * spreadsheet shows it instead of evaluating it (OWASP "CSV injection"): names come from the API.
 */
function cell(v: string | number | boolean | null): string {
  let s = v === null ? "" : String(v);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function renderCsv(r: FleetReport): string {
  const rows = r.nodes.map((n) => {
    const top = n.findings.reduce<string | null>(
      (m, f) =>
        m === null || SEVERITY_ORDER.indexOf(f.severity) > SEVERITY_ORDER.indexOf(m) ? f.severity : m,
      null,
    );
    const values: Record<(typeof COLUMNS)[number], string | number | boolean | null> = {
      node: n.node,
      pool: n.pool,
      outcome: n.outcome,
      phase: n.phase,
      verdict: n.verdict,
      findings: n.findings.map((f) => f.id).join(" "),
      highest_severity: top,
      kernel: n.kernelRelease ?? n.kernelVersion,
      os_image: n.osImage,
      kubelet_version: n.kubeletVersion,
      internal_ip: n.internalIP,
      listed_by_api: n.listedByApi,
      black_holed_addresses: n.blackHoledAddresses,
      reason: n.reason,
    };
    return COLUMNS.map((c) => cell(values[c])).join(",");
  });
  return `${[COLUMNS.join(","), ...rows].join("\r\n")}\r\n`;
}
