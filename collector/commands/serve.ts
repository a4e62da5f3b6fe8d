import { webAccess } from "../../agent/contract.js";
import { EXIT, type ExitCode } from "../../common/exit-codes.js";
import type { CollectorConfig } from "../config.js";
import { ConfigError, safeText } from "../../common/cli.js";
import { listenError } from "../../common/listen-error.js";
import { gather, staticTargets } from "../gather.js";
import {
  buildServer,
  COLLECTOR_PROBE_ROUTES,
  COLLECTOR_PUBLIC_ROUTES,
  type ServeOptions,
} from "../server.js";

/**
 * What a web config adds to the server: HTTPS and the agent's access model over the collector's routes.
 * A bad file is its message: serve then stops before it listens, since serving without the protection
 * asked for is worse.
 */
async function webServer(
  file: string,
  detailFrom: CollectorConfig["detailFrom"],
): Promise<Pick<ServeOptions, "https" | "access"> | { error: string }> {
  const web = await webAccess();
  let security;
  try {
    security = await web.loadWebConfig(file);
  } catch (e) {
    if (e instanceof web.WebConfigError) return { error: e.message };
    throw e;
  }
  const routes = { probe: COLLECTOR_PROBE_ROUTES, public: COLLECTOR_PUBLIC_ROUTES };
  return {
    ...(security.tls ? { https: web.httpsOptions(security.tls) } : {}),
    access: (app) => web.registerAccess(app, { security, detailFrom }, routes, "proxyscope-collector"),
  };
}

/** `proxyscope serve`: gather on an interval and serve the last good report until SIGTERM or SIGINT. */
export async function run(c: CollectorConfig): Promise<ExitCode> {
  // A list that cannot work stops serve before it listens; one that goes bad later fails that gather.
  if (c.source === "static") {
    const listed = await staticTargets(c);
    if (!listed.ok) throw new ConfigError(listed.error);
  }
  const web = c.webConfigFile === null ? {} : await webServer(c.webConfigFile, c.detailFrom);
  if ("error" in web) {
    process.stderr.write(`proxyscope: ${safeText(web.error)}\n`);
    return EXIT.usage;
  }
  const s = buildServer({
    intervalMs: c.intervalS * 1000,
    gather: () => gather(c),
    // A failed gather's line carries the API's and the agents' words.
    log: (l) => process.stderr.write(`${new Date().toISOString()} ${safeText(l)}\n`),
    detailFrom: c.detailFrom,
    ...web,
  });
  try {
    await s.app.listen({ host: c.listen, port: c.port });
  } catch (e) {
    await s.app.close().catch(() => undefined);
    throw listenError(e, c.listen, c.port) ?? e;
  }
  const addr = s.app.server.address();
  process.stderr.write(
    `proxyscope: serving on ${typeof addr === "object" && addr ? `${addr.address}:${addr.port}` : c.port}\n`,
  );
  s.start();
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
  });
  s.stop();
  await s.app.close();
  return EXIT.ok;
}
