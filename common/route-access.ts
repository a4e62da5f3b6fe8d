import { isIP } from "node:net";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { unmapIPv4 } from "./connection-limits.js";

/**
 * Who may read which route of one of our servers (the agent's, the collector's `serve`), decided on
 * the route the router MATCHED, never on the request's spelling: the router decodes percent-escapes
 * and takes absolute-form targets, so `/%72eport` and `GET http://x/report` are /report to it, and a
 * guard comparing the raw URL with "/report" let them through.
 *
 * - probe: always open (the kubelet cannot authenticate);
 * - public: open, or authenticated where authentication is configured;
 * - detail: everything else a route was registered for — authenticated, or from loopback, or from
 *   anyone with `--detail-from any`. A route nobody classified is detail: a new route is closed until
 *   someone opens it.
 */
export type DetailFrom = "loopback" | "any";
export type RouteClass = "probe" | "public" | "detail";

export interface RouteClasses {
  probe: ReadonlySet<string>;
  public: ReadonlySet<string>;
}

/** What an authentication step decided; "denied" means it has already sent the refusal. */
type AuthOutcome = "authenticated" | "anonymous" | "denied";

interface RouteAccessOptions {
  classes: RouteClasses;
  detailFrom: DetailFrom;
  /** The 403's words for the detail asked from elsewhere: how to open it on this program. */
  loopbackOnly: string;
  /** Run for every request but a probe's, the not-routed ones too (they get 401, not 404, unauthenticated). */
  authenticate?: (req: FastifyRequest, reply: FastifyReply) => Promise<AuthOutcome>;
}

export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const a = unmapIPv4(address);
  if (isIP(a) === 4) return a.startsWith("127.");
  return a === "::1";
}

/** The class of the route the router took for this request; null when no route took it (404 follows). */
function routeClass(req: FastifyRequest, classes: RouteClasses): RouteClass | null {
  // Fastify's routeOptions.url is the registered path of the matched route, undefined on not-found.
  const url = req.routeOptions.url;
  if (url === undefined) return null;
  if (classes.probe.has(url)) return "probe";
  if (classes.public.has(url)) return "public";
  return "detail";
}

export function registerRouteAccess(app: FastifyInstance, opts: RouteAccessOptions): void {
  app.addHook("onRequest", async (req, reply) => {
    const cls = routeClass(req, opts.classes);
    if (cls === "probe") return;
    const auth = opts.authenticate ? await opts.authenticate(req, reply) : "anonymous";
    if (auth === "denied") return reply;
    // Not routed: the not-found handler answers, with nothing to read.
    if (cls !== "detail" || auth === "authenticated" || opts.detailFrom === "any") return;
    if (isLoopback(req.raw.socket.remoteAddress)) return;
    return reply.code(403).type("application/json; charset=utf-8").send({ error: opts.loopbackOnly });
  });
}
