// The serving baseline: a bare node:http server answering /metrics and /report with fixed bytes (the
// agent's own bodies), nothing else running. What the machine and the load generator cost alone.
//   node dist/bench/node/static-serve.js PORT METRICS_FILE REPORT_FILE   (prints "ready")
import { readFileSync } from "node:fs";
import { createServer } from "node:http";

const [port, metricsFile, reportFile] = process.argv.slice(2);
const bodies: Record<string, [string, Buffer]> = {
  "/metrics": ["text/plain; version=0.0.4", readFileSync(metricsFile!)],
  "/report": ["application/json", readFileSync(reportFile!)],
};
const server = createServer((req, res) => {
  const b = bodies[req.url ?? ""];
  if (!b) return void res.writeHead(404).end();
  res.writeHead(200, { "content-type": b[0], "content-length": b[1].length }).end(b[1]);
});
server.keepAliveTimeout = 60_000;
server.listen(Number(port), "127.0.0.1", () => process.stdout.write("ready\n"));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
