import { clusterFindingReaches, clusterGaps, nodeReasons, type FailOn } from "../report/fail-on.js";
import type { FleetNode, FleetReport } from "../report/schema.js";
import { SCOPE_LABEL } from "../report/scope.js";
import { acceptLines } from "../report/accept.js";
import { nodeNote, phaseOf, verdictOf } from "./labels.js";

// `-o junit` for a CI job's test view: one testcase per node and one per cluster finding (and per
// cluster read that failed). A testcase fails when it reaches --fail-on, exactly as the exit code
// judges it (fail-on.ts); a node or cluster read nobody made is "skipped", never a pass.

// XML 1.0 has no way to write most C0 controls, not even escaped; a lone surrogate is not a character.
const NOT_XML =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const XML: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" };

/** Text or attribute value as XML: markup escaped, characters XML cannot hold replaced by U+FFFD. */
export function xml(s: string | number | null | undefined): string {
  return String(s ?? "")
    .replace(NOT_XML, "\ufffd")
    .replace(/[&<>"']/g, (c) => XML[c]!);
}

const attrs = (a: Record<string, string | number>) =>
  Object.entries(a)
    .map(([k, v]) => ` ${k}="${xml(v)}"`)
    .join("");

interface Case {
  classname: string;
  name: string;
  failure: { message: string; type: string; text: string } | null;
  skipped: string | null;
  out: string;
}

function nodeCase(n: FleetNode, failOn: FailOn | null): Case {
  const reasons = nodeReasons(n, failOn);
  const findings = n.findings.map((f) =>
    `${f.severity} ${f.id}: ${f.title ?? ""}${f.accepted ? ` [accepted: ${f.accepted.reason}]` : ""}`.trimEnd(),
  );
  return {
    classname: "proxyscope.node",
    name: n.node,
    failure:
      reasons.length > 0
        ? {
            message: `reached --fail-on ${failOn}: ${reasons.join("; ")}`,
            type: String(failOn),
            text: findings.join("\n"),
          }
        : null,
    skipped: reasons.length === 0 && n.outcome !== "ok" ? `not read: ${nodeNote(n)}` : null,
    out: [
      `phase ${phaseOf(n)}, verdict ${verdictOf(n)}, kernel ${n.kernel ?? "unknown"}`,
      ...findings,
      ...(n.outcome === "ok" && nodeNote(n) ? [nodeNote(n)] : []),
    ].join("\n"),
  };
}

function cases(r: FleetReport, failOn: FailOn | null): { nodes: Case[]; cluster: Case[] } {
  const cluster: Case[] = [
    ...r.clusterFindings.map((f) => ({
      classname: "proxyscope.cluster",
      name: f.id,
      failure: clusterFindingReaches(f, failOn)
        ? { message: `reached --fail-on ${failOn}: ${f.title}`, type: f.severity, text: f.remedy }
        : null,
      skipped: null,
      out: `${f.severity}: ${f.title}\nfix: ${f.remedy}${f.accepted ? `\naccepted: ${f.accepted.reason}` : ""}`,
    })),
    ...clusterGaps(r).map((g) => ({
      classname: "proxyscope.cluster-read",
      name: g.what,
      failure:
        failOn === "unanswered"
          ? {
              message: `reached --fail-on unanswered: ${g.what} not read`,
              type: "unanswered",
              text: g.reason,
            }
          : null,
      skipped: failOn === "unanswered" ? null : `not read: ${g.reason}`,
      out: g.reason,
    })),
  ];
  return { nodes: r.nodes.map((n) => nodeCase(n, failOn)), cluster };
}

function suite(name: string, list: Case[], timestamp: string, properties: string): string {
  const failures = list.filter((c) => c.failure !== null).length;
  const skipped = list.filter((c) => c.skipped !== null).length;
  const body = list.map((c) => {
    const inner = [
      c.failure
        ? `      <failure${attrs({ message: c.failure.message, type: c.failure.type })}>${xml(c.failure.text)}</failure>`
        : "",
      c.skipped !== null ? `      <skipped${attrs({ message: c.skipped })}/>` : "",
      `      <system-out>${xml(c.out)}</system-out>`,
    ].filter(Boolean);
    return `    <testcase${attrs({ classname: c.classname, name: c.name, time: 0 })}>\n${inner.join("\n")}\n    </testcase>`;
  });
  return [
    `  <testsuite${attrs({ name, tests: list.length, failures, errors: 0, skipped, timestamp })}>`,
    properties,
    ...body,
    "  </testsuite>",
  ]
    .filter(Boolean)
    .join("\n");
}

/** The fleet report as JUnit XML; `failOn` decides the failures, as it decides the exit code. */
export function renderJunit(r: FleetReport, failOn: FailOn | null): string {
  const { nodes, cluster } = cases(r, failOn);
  const all = [...nodes, ...cluster];
  const title = `proxyscope fleet report${r.scope ? ` (${SCOPE_LABEL[r.scope.kind]})` : ""}`;
  const props = [
    ["source", r.source],
    ["generatedAt", r.generatedAt],
    ["failOn", failOn ?? "(not set: nothing fails)"],
    ...(r.scope ? [["scope", r.scope.heading]] : []),
    ...(r.acceptances
      ? [
          [
            "accepted",
            acceptLines(r.acceptances)
              .map((l) => l.trim())
              .join("\n"),
          ],
        ]
      : []),
  ];
  const properties = `    <properties>\n${props.map(([k, v]) => `      <property${attrs({ name: k!, value: v! })}/>`).join("\n")}\n    </properties>`;
  const head = `<testsuites${attrs({
    name: title,
    tests: all.length,
    failures: all.filter((c) => c.failure !== null).length,
    errors: 0,
    skipped: all.filter((c) => c.skipped !== null).length,
  })}>`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    ...(r.scope ? [`<!-- ${xml(r.scope.heading).replace(/-(?=-)/g, "- ")} -->`] : []),
    head,
    suite("proxyscope nodes", nodes, r.generatedAt, properties),
    suite("proxyscope cluster", cluster, r.generatedAt, ""),
    "</testsuites>",
    "",
  ].join("\n");
}
