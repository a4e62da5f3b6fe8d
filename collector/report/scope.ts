import type { FleetNode, FleetReport, ReportScope } from "./schema.js";

// A report made without the nodes' own answers says so before anything else, in every format: the
// cluster's checks stand, but a node nobody read is "not read", never "fine".

/** The scope in a few words, for a title. */
export const SCOPE_LABEL: Record<ReportScope["kind"], string> = {
  "cluster-only": "cluster-only preflight",
  "saved-files": "from saved node reports",
  demo: "DEMO sample fleet",
};

const why = (n: FleetNode) => `${n.node}: ${n.outcome}${n.reason ? ` (${n.reason})` : ""}`;

/**
 * The cluster-only preflight: the API was read but no node's agent answered (none deployed, or none
 * reachable). Null when it is not one: a node answered, the API was not read, or it lists no node.
 */
export function clusterOnlyScope(r: FleetReport): ReportScope | null {
  const { nodes, answered } = r.summary;
  if (r.source !== "agents" || answered > 0 || nodes === 0) return null;
  if (!r.nodes.every((n) => n.listedByApi === true)) return null;
  return {
    kind: "cluster-only",
    heading:
      `cluster-only preflight: ${noAgentDeployed(r) ? "no proxyscope agent is deployed" : "no proxyscope agent answered"}, so these are the checks the Kubernetes API ` +
      `alone allows (node kernels from Node.status.nodeInfo, where the mode comes from, the deprecation ` +
      `stage, the Services the switch changes); the ${nodes} node(s) below were not read`,
    notRead: r.nodes.map(why),
  };
}

/**
 * No agent pod on any node: nothing was tried that could have failed, so the preflight is the answer.
 * (Agents deployed that all failed to answer are a broken gather: still no report, exit 5.)
 */
export function noAgentDeployed(r: FleetReport): boolean {
  return r.nodes.length > 0 && r.nodes.every((n) => n.outcome === "no-agent");
}

/** `--from-files` and `--demo`: saved node reports, not a live gather. */
export function savedScope(r: FleetReport, kind: "saved-files" | "demo", from: string): ReportScope {
  const bad = r.nodes.filter((n) => n.outcome !== "ok");
  return {
    kind,
    heading:
      kind === "demo"
        ? `DEMO: a sample fleet shipped with proxyscope (${from}), not your cluster; run "proxyscope report" for yours`
        : `from saved node reports (${from}), each as old as its scannedAt; not a live gather`,
    notRead: bad.map(why),
  };
}

/** The report with its scope, the scope first after the versions so a reader of the JSON sees it early. */
export function withScope(r: FleetReport, scope: ReportScope | null): FleetReport {
  if (scope === null) return r;
  const { schemaVersion, nodeSchemaVersion, collectorVersion, generatedAt, source, ...rest } = r;
  return { schemaVersion, nodeSchemaVersion, collectorVersion, generatedAt, source, scope, ...rest };
}

/** The heading's lines for a text format: the heading, then each node not read. */
export function scopeLines(s: ReportScope, maxNodes = 50): string[] {
  const shown = s.notRead.slice(0, maxNodes);
  return [
    s.heading,
    ...(shown.length > 0
      ? [
          `not read (${s.notRead.length}): ${shown.join("; ")}${s.notRead.length > maxNodes ? `; … and ${s.notRead.length - maxNodes} more` : ""}`,
        ]
      : []),
  ];
}
