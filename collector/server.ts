import { promisify } from "node:util";
import { gzip as gzipCb } from "node:zlib";
import type { FastifyInstance } from "fastify";
import { acceptsGzip } from "../common/accept-encoding.js";
import type { ConnectionLimits } from "../common/connection-limits.js";
import { fail, hardenedFastify } from "../common/http-server.js";
import type { DetailFrom } from "../common/route-access.js";
import { httpsOptions, registerAccess, type ServerAccess } from "../common/web-access.js";
import type { WebSecurity } from "../common/web-config.js";
import { fleetMetrics } from "./render/fleet-metrics.js";
import type { GatherResult } from "./gather/gather.js";
import type { FleetReport } from "./report/schema.js";
import { gatherCycle, type LatestReport } from "./server/latest-report.js";

const gzip = promisify(gzipCb);

export interface ServeOptions {
  intervalMs: number;
  gather: () => Promise<GatherResult>;
  log: (line: string) => void;
  /** Connection cap and deadlines; default: from this process's file descriptor limit. */
  limits?: ConnectionLimits;
  /** Who may read the fleet report (/report, /): loopback clients only, or anyone who reaches the port. */
  detailFrom?: DetailFrom;
  /** TLS and authentication from --web.config.file (common/web-access.ts); none: plain HTTP. */
  security?: WebSecurity | null;
}

// The fleet report carries every node's findings with their evidence (addresses, rule text): the
// agents' detail, gathered in one place. The probe and the fleet gauges stay open.
export const COLLECTOR_PROBE_ROUTES: ReadonlySet<string> = new Set(["/healthz"]);
export const COLLECTOR_PUBLIC_ROUTES: ReadonlySet<string> = new Set(["/metrics"]);
export const COLLECTOR_ACCESS: ServerAccess = {
  routes: { probe: COLLECTOR_PROBE_ROUTES, public: COLLECTOR_PUBLIC_ROUTES },
  realm: "proxyscope-collector",
  loopbackOnly:
    "the fleet report answers loopback clients only (kubectl port-forward arrives there): configure authentication (--web.config.file) or --detail-from any",
};

/**
 * `proxyscope serve`: gather on an interval, always serve the last good report (with its age), never
 * gather on request — a scrape or a page view must not fan out to 5,000 agents.
 */
export function buildServer(opts: ServeOptions): {
  app: FastifyInstance;
  start: () => void;
  stop: () => void;
} {
  const metrics = fleetMetrics();
  const state: LatestReport = { latest: null, lastError: null };
  const cycle = gatherCycle(state, opts.gather, metrics, opts.log);
  let timer: NodeJS.Timeout | null = null;

  // Held connections must not take the descriptors the gather needs for its agent calls.
  const security = opts.security ?? null;
  const app = hardenedFastify({
    ...(opts.limits ? { limits: opts.limits } : {}),
    ...(security?.tls ? { https: httpsOptions(security.tls) } : {}),
  });
  registerAccess(app, { security, detailFrom: opts.detailFrom ?? "loopback" }, COLLECTOR_ACCESS);
  routes(app, state, metrics);

  return {
    app,
    start() {
      void cycle();
      timer = setInterval(() => void cycle(), opts.intervalMs);
    },
    stop() {
      if (timer) clearInterval(timer);
    },
  };
}

/** The report as JSON and as the page, with its age; the fleet gauges; the probe. */
function routes(app: FastifyInstance, state: LatestReport, metrics: ReturnType<typeof fleetMetrics>): void {
  const age = (r: FleetReport) =>
    String(Math.max(0, Math.round((Date.now() - Date.parse(r.generatedAt)) / 1000)));
  app.get("/report", async (_req, reply) => {
    const { latest, lastError } = state;
    if (!latest) return fail(reply, 503, "no report yet", { lastError });
    reply.header("age", age(latest.report));
    return reply.type("application/json; charset=utf-8").send(JSON.stringify(latest.report));
  });
  app.get("/", async (_req, reply) => {
    const { latest } = state;
    if (!latest) return reply.code(503).type("text/plain; charset=utf-8").send("no report yet\n");
    reply.header("age", age(latest.report));
    return reply.type("text/html; charset=utf-8").send(latest.html);
  });
  // A few fleet gauges, rendered per scrape (not per gather): so is their gzip, a few hundred bytes.
  app.get("/metrics", async (req, reply) => {
    reply.header("vary", "Accept-Encoding").type(metrics.registry.contentType);
    const body = await metrics.registry.metrics();
    if (!acceptsGzip(req.headers["accept-encoding"])) return reply.send(body);
    return reply.header("content-encoding", "gzip").send(await gzip(body));
  });
  app.get("/healthz", async (_req, reply) =>
    reply.send({ ok: true, haveReport: state.latest !== null, lastError: state.lastError }),
  );
}
