import type { VirtualServerOutcome } from "../sources/agents.js";
import { terminalSafe as safe } from "../../common/escape.js";

interface LcAuditInput {
  service: string;
  address: string;
  port: number;
  protocol: string;
  outcomes: readonly VirtualServerOutcome[];
}

/**
 * Each node's own connection counts per endpoint, side by side: the guide's demonstration that `lc`
 * (least connections) is decided per client node, from counts that disagree because each node only
 * sees the connections it opened.
 */
export function renderLcAudit(a: LcAuditInput): string {
  const ok = a.outcomes.filter((o): o is Extract<VirtualServerOutcome, { ok: true }> => o.ok);
  const endpoints = [
    ...new Set(ok.flatMap((o) => o.answer.realServers.map((r) => endpointKey(r.address, r.port)))),
  ].sort();
  const schedulers = [...new Set(ok.map((o) => o.answer.virtualServer.scheduler))];
  const out: string[] = [];
  out.push(
    `Service ${safe(a.service)}  ${safe(a.address)}:${a.port}/${safe(a.protocol)}  scheduler: ${schedulers.map(safe).join(", ") || "unknown"}`,
  );
  out.push("active/inactive connections to each endpoint, as each node's own IPVS table counts them:");
  const head = ["ENDPOINT", ...ok.map((o) => safe(o.node))];
  const rows = endpoints.map((e) => [
    safe(e),
    ...ok.map((o) => {
      const r = o.answer.realServers.find((x) => endpointKey(x.address, x.port) === e);
      return r ? `${r.activeConns}/${r.inactiveConns}` : "-";
    }),
  ]);
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  for (const r of [head, ...rows])
    out.push(
      `  ${r
        .map((c, i) => c.padEnd(w[i]!))
        .join("  ")
        .trimEnd()}`,
    );
  const failed = a.outcomes.filter((o): o is Extract<VirtualServerOutcome, { ok: false }> => !o.ok);
  for (const f of failed) out.push(`  ${safe(f.node)}: ${safe(f.reason)}`);
  out.push("");
  out.push(
    disagree(ok, endpoints)
      ? 'The nodes\' counts disagree: every node balances by the connections it opened itself. There is no cluster-wide "least connections".'
      : "Each column is one node's local view; with `lc` every node decides from its own counts only.",
  );
  out.push(
    "Sticky clients: Service .spec.sessionAffinity: ClientIP. Node-local traffic: .spec.internalTrafficPolicy: Local.",
  );
  return out.join("\n");
}

const endpointKey = (address: string, port: number) =>
  address.includes(":") ? `[${address}]:${port}` : `${address}:${port}`;

function disagree(
  ok: readonly Extract<VirtualServerOutcome, { ok: true }>[],
  endpoints: readonly string[],
): boolean {
  // The sentence this gates says the nodes' counts differ, so compare the counts themselves: which
  // endpoint each node picks next can coincide by a tie even when their views differ.
  const views = new Set(
    ok.map((o) =>
      endpoints
        .map((e) => o.answer.realServers.find((r) => endpointKey(r.address, r.port) === e)?.activeConns ?? 0)
        .join(","),
    ),
  );
  return views.size > 1;
}
