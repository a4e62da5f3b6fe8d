import type { TLSSocket } from "node:tls";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { BasicAuthChecker } from "./basic-auth.js";
import { registerRouteAccess, type DetailFrom, type RouteClasses } from "./route-access.js";
import type { WebSecurity } from "./web-config.js";

/**
 * The access model of both servers' ports (the agent's, the collector's `serve`), over the route
 * classes of common/route-access.ts:
 *
 * - Probes are always open: the kubelet cannot authenticate.
 * - With basic_auth_users or verified client certificates in the web config (the exporter-toolkit
 *   format, web-config.ts), every other route needs them (the behaviour node_exporter users expect),
 *   and an authenticated client may read the detail too.
 * - Without authentication, the public routes are open and the detail answers only loopback clients
 *   unless `--detail-from any` says the port is protected some other way.
 */
export interface AccessOptions {
  security: WebSecurity | null;
  detailFrom: DetailFrom;
  /** The basic auth checker to use (tests pass one to see its state); one is made from the users otherwise. */
  basicAuth?: BasicAuthChecker;
}

/** What differs between the servers: their routes, the basic auth realm, the words of the loopback 403. */
export interface ServerAccess {
  routes: RouteClasses;
  realm: string;
  loopbackOnly: string;
}

function authRequired(s: WebSecurity | null): boolean {
  if (s === null) return false;
  return s.users.size > 0 || s.tls?.clientAuth === "RequireAndVerifyClientCert";
}

function parseBasic(header: string | undefined): { user: string; password: string } | null {
  if (header === undefined) return null;
  const m = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(header.trim());
  if (m === null) return null;
  const decoded = Buffer.from(m[1]!, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return null;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

function deny(reply: FastifyReply, status: number, error: string) {
  return reply.code(status).type("application/json; charset=utf-8").send({ error });
}

/** What the client proved: a verified client certificate, a basic auth user, or nothing. */
async function authenticate(
  req: FastifyRequest,
  s: WebSecurity,
  users: BasicAuthChecker,
): Promise<"ok" | "missing" | "bad" | "busy" | "cert"> {
  const socket = req.raw.socket as Partial<TLSSocket>;
  const clientAuth = s.tls?.clientAuth ?? "NoClientCert";
  const peer = typeof socket.getPeerCertificate === "function" ? socket.getPeerCertificate() : null;
  const hasCert = peer !== null && Object.keys(peer).length > 0;
  if (clientAuth === "RequireAnyClientCert" && !hasCert) return "cert";
  if (
    (clientAuth === "RequireAndVerifyClientCert" || (clientAuth === "VerifyClientCertIfGiven" && hasCert)) &&
    socket.authorized !== true
  )
    return "cert";
  if (s.users.size === 0) return "ok";
  const creds = parseBasic(req.headers.authorization);
  if (creds === null) return "missing";
  const r = await users.check(creds.user, creds.password);
  return r === "busy" ? "busy" : r ? "ok" : "bad";
}

/** The access model on `app`: TLS client certificates, basic auth and headers, the loopback-only detail. */
export function registerAccess(app: FastifyInstance, opts: AccessOptions, server: ServerAccess): void {
  const s = opts.security;
  const users = opts.basicAuth ?? new BasicAuthChecker(s?.users ?? new Map());
  const required = authRequired(s);
  const headers = s?.headers ?? {};

  app.addHook("onSend", async (_req, reply, payload) => {
    for (const [k, v] of Object.entries(headers)) reply.header(k, v);
    return payload;
  });

  registerRouteAccess(app, {
    classes: server.routes,
    detailFrom: opts.detailFrom,
    loopbackOnly: server.loopbackOnly,
    authenticate: async (req, reply) => {
      if (s === null || (!required && s.tls?.clientAuth === "NoClientCert")) return "anonymous";
      const r = await authenticate(req, s, users);
      if (r === "cert") {
        deny(reply, 403, "a valid client certificate is required");
        return "denied";
      }
      if (r === "busy") {
        reply.header("retry-after", String(users.retryAfterS()));
        deny(reply, 429, "too many password checks at once or in the last seconds: retry later");
        return "denied";
      }
      if (r === "missing" || r === "bad") {
        reply.header("www-authenticate", `Basic realm="${server.realm}", charset="UTF-8"`);
        deny(reply, 401, "authentication required");
        return "denied";
      }
      return required ? "authenticated" : "anonymous";
    },
  });
}

/** Node's TLS server options for the web config's tls_server_config. */
export function httpsOptions(tls: NonNullable<WebSecurity["tls"]>) {
  const ask = tls.clientAuth !== "NoClientCert";
  return {
    key: tls.key,
    cert: tls.cert,
    ...(tls.ca !== undefined ? { ca: tls.ca } : {}),
    requestCert: ask,
    // Only RequireAndVerifyClientCert fails the handshake itself; the other policies are checked per
    // request (authenticate above), where the answer can say why.
    rejectUnauthorized: tls.clientAuth === "RequireAndVerifyClientCert",
    minVersion: tls.minVersion,
    maxVersion: tls.maxVersion,
    honorCipherOrder: tls.honorCipherOrder,
  };
}
