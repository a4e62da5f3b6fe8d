import type { FastifyBaseLogger, FastifyInstance, FastifyReply } from "fastify";
import { acceptsGzip } from "../../common/accept-encoding.js";
import type { ConnectionLimits } from "../../common/connection-limits.js";
import { fail, hardenedFastify } from "../../common/http-server.js";
import { httpsOptions, registerAccess, type AccessOptions } from "../../common/web-access.js";
import { VERSION } from "../../common/version.js";
import { AGENT_ACCESS } from "./access.js";
import { agentLandingPage } from "./landing.js";
import { describeQueryProblems, VirtualServerQuery } from "./ipvs-query.js";
import type { VirtualServerLookup } from "./ipvs-lookup.js";
import type { AgentState, ScanRecord } from "./state.js";
import { RateBudget } from "./rate-budget.js";

interface AppOptions {
  logger?: FastifyBaseLogger;
  /** Reads one virtual server's real servers fresh from the kernel. */
  lookupVirtualServer: VirtualServerLookup;
  /** The scan interval, so a client told to retry knows when a first report can exist. */
  retryAfterS?: number;
  /**
   * TLS, authentication and who may read the detail routes (common/web-access.ts, the routes in
   * access.ts); default: plain HTTP, no authentication, the detail for loopback clients only.
   */
  access?: AccessOptions;
  /** Connection cap and deadlines; default: from this process's file descriptor limit. */
  limits?: ConnectionLimits;
  /** IPVS lookups allowed per window, for the whole agent (default 10 per 10 s). */
  ipvsLookupBudget?: { calls: number; windowMs: number };
  /** The clock of that budget (tests). */
  now?: () => number;
}

// Big IPVS tables make each lookup a full read of /proc/net/ip_vs; more at once only slows the node.
const MAX_LOOKUPS_IN_FLIGHT = 2;
// A lookup costs ~320 ms of CPU at 10,000 Services; the concurrency cap alone lets a client loop
// keep two cores busy. 10 per 10 s bounds it to about a third of one core.
const DEFAULT_LOOKUP_BUDGET = { calls: 10, windowMs: 10_000 };

/** The agent's HTTP API. Every answer is JSON or the Prometheus text format, never a stack trace or echoed input. */
export function buildApp(state: AgentState, opts: AppOptions): FastifyInstance {
  const tls = opts.access?.security?.tls;
  const app = hardenedFastify({
    ...(opts.logger ? { logger: opts.logger } : {}),
    ...(tls ? { https: httpsOptions(tls) } : {}),
    ...(opts.limits ? { limits: opts.limits } : {}),
  });
  registerAccess(app, opts.access ?? { security: null, detailFrom: "loopback" }, AGENT_ACCESS);
  // The reports' zod schemas are loaded on the first schema request, not at start: ~8 MB of the
  // serving thread's memory for routes few clients ever ask for (bench/results/rss.md).
  let schemaJson: Promise<string> | null = null;
  let fleetSchemaJson: Promise<string> | null = null;
  let lookups = 0;
  const budgetOpts = opts.ipvsLookupBudget ?? DEFAULT_LOOKUP_BUDGET;
  const budget = new RateBudget(budgetOpts.calls, budgetOpts.windowMs, opts.now);

  const sendReport = (
    reply: FastifyReply,
    r: ScanRecord | null,
    missing: string,
    body: (r: ScanRecord) => Buffer = (x) => x.json,
  ) => {
    if (r === null) {
      if (opts.retryAfterS !== undefined) reply.header("retry-after", String(Math.ceil(opts.retryAfterS)));
      return fail(reply, 503, missing);
    }
    // The body stays a plain NodeReport (the same schema as `scan --json`); its age rides in headers.
    return reply
      .header("x-report-age-seconds", state.ageSeconds(r).toFixed(3))
      .header("last-modified", new Date(r.completedAtMs).toUTCString())
      .type("application/json; charset=utf-8")
      .send(body(r));
  };

  app.get("/report", (_req, reply) => sendReport(reply, state.current, "no scan has completed yet"));
  app.get("/report/previous", (_req, reply) =>
    sendReport(reply, state.previous, "fewer than two scans have completed"),
  );
  // What the fleet collector reads: the FleetDigest of the same scan, headers as /report's.
  app.get("/report/fleet", (_req, reply) =>
    sendReport(reply, state.current, "no scan has completed yet", (r) => r.fleetJson),
  );
  app.get("/report/summary", (_req, reply) => {
    const r = state.current;
    if (r === null) return fail(reply, 503, "no scan has completed yet");
    return reply
      .header("x-report-age-seconds", state.ageSeconds(r).toFixed(3))
      .type("application/json; charset=utf-8")
      .send(r.summaryJson);
  });
  // Parity: the per-Service parity list (the report's facts.parity, which /report also carries).
  app.get("/parity", (_req, reply) => {
    const r = state.current;
    if (r === null) return fail(reply, 503, "no scan has completed yet");
    if (!r.parity.ok) return fail(reply, 503, r.parity.message);
    return reply
      .header("x-report-age-seconds", state.ageSeconds(r).toFixed(3))
      .type("application/json; charset=utf-8")
      .send(r.parity.json);
  });
  app.get("/report/schema", async (_req, reply) => {
    schemaJson ??= import("../report/schema.js").then((m) => JSON.stringify(m.nodeReportJsonSchema()));
    return reply.type("application/schema+json; charset=utf-8").send(await schemaJson);
  });
  app.get("/report/fleet/schema", async (_req, reply) => {
    fleetSchemaJson ??= import("../report/fleet-digest.js").then((m) =>
      JSON.stringify(m.fleetDigestJsonSchema()),
    );
    return reply.type("application/schema+json; charset=utf-8").send(await fleetSchemaJson);
  });
  const landing = agentLandingPage(VERSION);
  app.get("/", (_req, reply) => reply.type("text/html; charset=utf-8").send(landing));
  app.get("/healthz", (_req, reply) => reply.send({ status: "ok" }));
  app.get("/readyz", (_req, reply) => {
    if (!state.ready) return fail(reply, 503, "no scan has completed yet");
    return reply.send({ status: "ready", reportAgeSeconds: state.ageSeconds(state.current!) });
  });
  app.get("/metrics", async (req, reply) => {
    // Rendered once per scan (AgentMetrics), and gzipped at most once per render; a scrape only sends bytes.
    reply.header("vary", "Accept-Encoding").type(state.metrics.contentType());
    if (acceptsGzip(req.headers["accept-encoding"])) {
      return reply.header("content-encoding", "gzip").send(await state.metrics.expositionGzip());
    }
    return reply.send(await state.metrics.expositionBytes());
  });
  app.get("/ipvs/virtual-server", async (req, reply) => {
    const q = VirtualServerQuery.safeParse(req.query);
    if (!q.success) return fail(reply, 400, "invalid query", { problems: describeQueryProblems(q.error) });
    const waitS = budget.waitS();
    if (waitS > 0) {
      reply.header("retry-after", String(waitS));
      return fail(
        reply,
        429,
        `IPVS lookup budget spent: ${budgetOpts.calls} per ${budgetOpts.windowMs / 1000} s`,
      );
    }
    if (lookups >= MAX_LOOKUPS_IN_FLIGHT) {
      reply.header("retry-after", "1");
      return fail(reply, 429, "too many IPVS lookups in flight");
    }
    budget.spend();
    lookups++;
    try {
      const r = await opts.lookupVirtualServer(q.data);
      switch (r.status) {
        case "found":
          return reply.send({ virtualServer: r.virtualServer, realServers: r.realServers });
        case "not-found":
          return fail(reply, 404, "no such virtual server");
        case "ipvs-absent":
          return fail(reply, 404, "IPVS is not loaded on this node (no /proc/net/ip_vs)");
        case "failed":
          req.log.warn({ error: r.error }, "IPVS lookup failed");
          return fail(reply, 503, "could not read the IPVS table", { kind: r.error.kind });
      }
    } finally {
      lookups--;
    }
  });
  return app;
}
