import type { Server as HttpServer } from "node:http";
import type { ServerOptions as HttpsServerOptions } from "node:https";
import { createRequire } from "node:module";
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyServerOptions,
} from "fastify";
import {
  capConnections,
  connectionLimits,
  fastifyLimitOptions,
  type ConnectionLimits,
} from "./connection-limits.js";

interface HardenedServerOptions {
  /** Errors (5xx) are logged here; request lines never are. Without it nothing is logged. */
  logger?: FastifyBaseLogger;
  /** Serve HTTPS with these TLS options (the agent's --web.config.file); plain HTTP without. */
  https?: HttpsServerOptions;
  /** Connection cap and deadlines; default: from this process's file descriptor limit. */
  limits?: ConnectionLimits;
}

// Both programs serve GET and HEAD only: a request body is never read, so a small limit costs nothing.
const BODY_LIMIT = 1024;

// node:http through require, not an ES import: Node 26 builds an ES module's namespace from every export,
// and node:http's lazy WebSocket, CloseEvent and MessageEvent load undici to give them (809 KB of source,
// ~2.4 MB of heap, ~11 MB of RSS in a bare process) into a serving thread that never fetches anything.
const { STATUS_CODES } = createRequire(import.meta.url)("node:http") as typeof import("node:http");

// Fastify builds its schema compilers at start: @fastify/ajv-compiler loads ajv (88 modules) and the
// serializer's compiler fast-json-stringify, which a server whose routes declare no schema never calls,
// and a serving thread keeps every module it loaded for its whole life. These builders load them on
// the first route with a schema instead (fastify calls a builder only then: schema-controller.js
// setupValidator/setupSerializer). Being "custom" builders changes one thing, for headers schemas
// only (their keys are not lower-cased); neither program declares one.
// Resolved from fastify's own file, so it is the compiler fastify itself would load.
const fromFastify = (id: string): unknown => {
  const here = createRequire(import.meta.url);
  return createRequire(here.resolve("fastify"))(id);
};
type CompilersFactory = NonNullable<
  NonNullable<FastifyServerOptions["schemaController"]>["compilersFactory"]
>;
type ValidatorBuilder = NonNullable<CompilersFactory["buildValidator"]>;
type SerializerBuilder = NonNullable<CompilersFactory["buildSerializer"]>;
let validatorBuilder: ValidatorBuilder | null = null;
let serializerBuilder: SerializerBuilder | null = null;
const LAZY_COMPILERS: CompilersFactory = {
  buildValidator: (...args) => {
    validatorBuilder ??= (fromFastify("@fastify/ajv-compiler") as () => ValidatorBuilder)();
    return validatorBuilder(...args);
  },
  buildSerializer: (...args) => {
    serializerBuilder ??= (fromFastify("@fastify/fast-json-stringify-compiler") as () => SerializerBuilder)();
    return serializerBuilder(...args);
  },
};

/**
 * A Fastify instance for a read-only HTTP API that answers every request itself: no framework message,
 * stack trace, method, URL or header from the request is ever echoed back, a GET with a body is refused,
 * a known path asked with another method is 405 with `allow`, and nothing is sniffed or cached.
 */
export function hardenedFastify(opts: HardenedServerOptions = {}): FastifyInstance {
  const limits = opts.limits ?? connectionLimits();
  const app = Fastify({
    // Held connections must not take the descriptors scans and agent calls need.
    ...fastifyLimitOptions(limits),
    ...(opts.logger ? { loggerInstance: opts.logger } : { logger: false }),
    // Scrapes every few seconds would drown the rest of the log; errors are still logged.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT,
    return503OnClosing: true,
    schemaController: { compilersFactory: LAZY_COMPILERS },
    // A URL Fastify cannot route (e.g. "/%") is answered before any handler, quoting it by default.
    frameworkErrors: (_err, _req, reply) => {
      void fail(reply as unknown as FastifyReply, 400, "bad request");
    },
    // With TLS Fastify hands these to https.createServer instead of `http`: the deadlines go with them.
    ...(opts.https
      ? {
          https: {
            ...opts.https,
            ...fastifyLimitOptions(limits).http,
            handshakeTimeout: limits.handshakeTimeoutMs,
          },
        }
      : {}),
  }) as unknown as FastifyInstance;
  capConnections(app.server as unknown as HttpServer, limits);
  // Every path a route was registered for, so the not-found handler can tell 405 from 404.
  const paths = new Set<string>();
  app.addHook("onRoute", (route) => {
    paths.add(route.url);
  });

  app.addHook("onRequest", async (req, reply) => {
    const length = req.headers["content-length"];
    const hasBody =
      req.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
    if ((req.method === "GET" || req.method === "HEAD") && hasBody) {
      return fail(reply, 400, "a GET request carries no body");
    }
  });
  app.addHook("onSend", async (_req, reply, payload) => {
    reply.header("x-content-type-options", "nosniff");
    reply.header("cache-control", "no-store");
    return payload;
  });

  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split("?")[0];
    if (path !== undefined && paths.has(path)) {
      reply.header("allow", "GET, HEAD");
      return fail(reply, 405, "method not allowed");
    }
    return fail(reply, 404, "not found");
  });
  app.setErrorHandler((err: { statusCode?: number }, req, reply) => {
    const status =
      err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    if (status >= 500) req.log.error({ err }, "request failed");
    // Fixed words per status: framework messages can quote the request (a media type, a URL).
    return fail(
      reply,
      status,
      status >= 500 ? "internal error" : (STATUS_CODES[status] ?? "error").toLowerCase(),
    );
  });
  return app;
}

/** A JSON error answer: fixed words chosen by the server, plus fields it chose to add. */
export function fail(
  reply: FastifyReply,
  status: number,
  error: string,
  extra: Record<string, unknown> = {},
) {
  return reply
    .code(status)
    .type("application/json; charset=utf-8")
    .send({ error, ...extra });
}
