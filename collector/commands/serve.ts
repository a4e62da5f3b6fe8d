import { EXIT, type ExitCode } from "../../common/exit-codes.js";
import type { CollectorConfig } from "../config.js";
import { gather } from "../gather.js";
import { buildServer } from "../server.js";

/** `proxyscope serve`: gather on an interval and serve the last good report until SIGTERM or SIGINT. */
export async function run(c: CollectorConfig): Promise<ExitCode> {
  const s = buildServer({
    intervalMs: c.intervalS * 1000,
    gather: () => gather(c),
    log: (l) => process.stderr.write(`${new Date().toISOString()} ${l}\n`),
    detailFrom: c.detailFrom,
  });
  await s.app.listen({ host: c.listen, port: c.port });
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
