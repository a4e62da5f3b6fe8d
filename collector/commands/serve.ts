import { EXIT, type ExitCode } from "../../common/exit-codes.js";
import type { CollectorConfig } from "../config.js";
import { ConfigError, safeText } from "../../common/cli.js";
import { gather, staticTargets } from "../gather.js";
import { listenError } from "../../common/listen-error.js";
import { buildServer } from "../server.js";

/** `proxyscope serve`: gather on an interval and serve the last good report until SIGTERM or SIGINT. */
export async function run(c: CollectorConfig): Promise<ExitCode> {
  // A list that cannot work stops serve before it listens; one that goes bad later fails that gather.
  if (c.source === "static") {
    const listed = await staticTargets(c);
    if (!listed.ok) throw new ConfigError(listed.error);
  }
  const s = buildServer({
    intervalMs: c.intervalS * 1000,
    gather: () => gather(c),
    // A failed gather's line carries the API's and the agents' words.
    log: (l) => process.stderr.write(`${new Date().toISOString()} ${safeText(l)}\n`),
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
