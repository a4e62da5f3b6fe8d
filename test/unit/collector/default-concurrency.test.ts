import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import t from "tap";
import { loadConfig } from "../../../collector/config.js";
import { gather } from "../../../collector/gather/gather.js";
import { defaultAgentCalls } from "../../../collector/sources/kubernetes/index.js";

// With no --concurrency, a gather straight to the agents keeps 64 calls in flight (each answer is a ~2 KB
// fleet digest now); through the API server's pod proxy, where each call is an API request, 32.

t.test("the defaults by route", async (t) => {
  t.equal(defaultAgentCalls(true), 64);
  t.equal(defaultAgentCalls(false), 32);
  t.equal(loadConfig([]).concurrency, null, "unset: decided by the route");
  t.equal(loadConfig(["--concurrency", "8"]).concurrency, 8);
});

t.test("a static gather holds 64 agent calls in flight by default", async (t) => {
  // Every call is held until 64 are in, or until none has arrived for 20 s (a wide margin: a pool of
  // 32 would stop at 32 and wait there); then all are answered 503 and the next ones pass at once.
  const held: ServerResponse[] = [];
  let most = 0;
  let quiet: NodeJS.Timeout | null = null;
  let releasing = false;
  const release = () => {
    releasing = true;
    for (const r of held.splice(0)) r.writeHead(503).end();
  };
  const server = createServer((_req, res) => {
    if (releasing) return void res.writeHead(503).end();
    held.push(res);
    most = Math.max(most, held.length);
    if (quiet) clearTimeout(quiet);
    if (held.length >= 64) return release();
    quiet = setTimeout(release, 20_000);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.teardown(() => {
    if (quiet) clearTimeout(quiet);
    server.closeAllConnections();
    server.close();
  });
  const port = (server.address() as AddressInfo).port;
  const agents = Array.from({ length: 100 }, (_, i) => `http://127.0.0.1:${port}/n${i}`);
  const cfg = loadConfig(
    ["--source", "static", "--timeout-ms", "60000", "--agents", ...agents],
    {},
    "report",
  );
  const r = await gather({ ...cfg, gatherDeadlineMs: 120_000 });
  t.ok(r.ok, r.ok ? "a report" : r.error);
  t.equal(most, 64, "64 calls in flight at the most");
  if (r.ok) t.equal(r.report.nodes.length, 100, "every agent is in the report");
});
