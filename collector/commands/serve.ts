import { EXIT, type ExitCode } from "../../common/exit-codes.js";
import type { CollectorConfig } from "../config.js";
import { ConfigError, safeText } from "../../common/cli.js";
import { listenError } from "../../common/listen-error.js";
import type { WebSecurity } from "../../common/web-config.js";
import { gather, staticTargets } from "../gather/gather.js";
import { buildServer } from "../server.js";

/**
 * The web config's TLS and authentication, or the file's problem: serve then stops before it listens,
 * since serving without the protection asked for is worse. Loaded on demand: only a server given
 * --web.config.file needs yaml.
 */
async function webSecurity(file: string): Promise<WebSecurity | { error: string }> {
  const { loadWebConfig, WebConfigError } = await import("../../common/web-config.js");
  try {
    return await loadWebConfig(file);
  } catch (e) {
    if (e instanceof WebConfigError) return { error: e.message };
    throw e;
  }
}

/** `proxyscope serve`: gather on an interval and serve the last good report until SIGTERM or SIGINT. */
export async function run(c: CollectorConfig): Promise<ExitCode> {
  // A list that cannot work stops serve before it listens; one that goes bad later fails that gather.
  if (c.source === "static") {
    const listed = await staticTargets(c);
    if (!listed.ok) throw new ConfigError(listed.error);
  }
  const security = c.webConfigFile === null ? null : await webSecurity(c.webConfigFile);
  if (security !== null && "error" in security) {
    process.stderr.write(`proxyscope: ${safeText(security.error)}\n`);
    return EXIT.usage;
  }
  // As the agent logs them: a port left open or passwords in clear text is said at start.
  if (security !== null)
    for (const warning of security.warnings)
      process.stderr.write(`proxyscope: web config ${safeText(security.source)}: ${warning}\n`);
  const s = buildServer({
    intervalMs: c.intervalS * 1000,
    gather: () => gather(c),
    // A failed gather's line carries the API's and the agents' words.
    log: (l) => process.stderr.write(`${new Date().toISOString()} ${safeText(l)}\n`),
    detailFrom: c.detailFrom,
    security,
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
