// The connection cap of both servers (#13.2): the agent's and the collector's `serve`. Real sockets on
// loopback: past the cap each new connection is closed by the server at once, the held ones are
// closed by the header deadline, and the server answers once they are gone. The real-process case
// (a scan under the attack, a low fd limit) is test/e2e/agent-connections.test.ts.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import t, { type Test } from "tap";
import { AgentMetrics } from "../../../agent/metrics/agent-metrics.js";
import { buildApp } from "../../../agent/server/app.js";
import { connectionLimits, softFdLimit } from "../../../common/connection-limits.js";
import { AgentState } from "../../../agent/server/state.js";
import { buildServer } from "../../../collector/server.js";

t.test("the cap follows the soft descriptor limit, leaving most of it to the probes", async (t) => {
  t.equal(connectionLimits(256).maxConnections, 64, "a quarter of a low limit");
  t.equal(connectionLimits(1024).maxConnections, 128, "at most 128");
  t.equal(connectionLimits(1_048_576).maxConnections, 128);
  t.equal(connectionLimits(null).maxConnections, 128, "unknown or unlimited: the fixed cap");
  t.equal(connectionLimits(16).maxConnections, 8, "never below 8");
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-limits-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const f = join(dir, "limits");
  writeFileSync(
    f,
    "Limit                     Soft Limit           Hard Limit           Units     \n" +
      "Max processes             63704                63704                processes \n" +
      "Max open files            1024                 524288               files     \n",
  );
  t.equal(softFdLimit(f), 1024, "the soft column, not the hard one");
  writeFileSync(f, "Max open files            unlimited            unlimited            files\n");
  t.equal(softFdLimit(f), null);
  t.equal(softFdLimit(join(dir, "missing")), null);
  t.ok((softFdLimit() ?? 0) > 0, "this process's own limit is read");
});

const CAP = 4;
const limits = {
  ...connectionLimits(null),
  maxConnections: CAP,
  headersTimeoutMs: 3000,
  checkIntervalMs: 500,
};

async function holdMoreThanTheCap(t: Test, app: FastifyInstance, path: string) {
  await app.listen({ host: "127.0.0.1", port: 0 });
  t.teardown(() => app.close());
  const port = (app.server.address() as net.AddressInfo).port;
  t.equal(app.server.maxConnections, CAP, "the cap is on the server");
  // Half idle, half a slowloris (headers that never end).
  const sockets = Array.from({ length: 3 * CAP }, (_, i) => {
    const s = net.connect(port, "127.0.0.1");
    s.on("error", () => undefined);
    // Read (and drop) what the server sends: a paused socket never sees the server's 408 and FIN, so
    // its 'close' would wait forever although the server closed it at its deadline.
    s.resume();
    if (i % 2) s.on("connect", () => s.write("GET /healthz HTTP/1.1\r\nHost: x\r\n"));
    return s;
  });
  const closed = sockets.map((s) => new Promise<void>((r) => s.once("close", () => r())));
  // Every one is closed by the server, none by us: past the cap at once, the rest at their deadline.
  await Promise.all(closed);
  t.pass(`all ${sockets.length} held connections were closed by the server`);
  const r = await fetch(`http://127.0.0.1:${port}${path}`);
  t.equal(r.status, 200, `${path} answers once they are gone`);
}

t.test("the agent's server", async (t) => {
  const app = buildApp(new AgentState(new AgentMetrics({ version: "test" })), {
    lookupVirtualServer: async () => ({ status: "ipvs-absent" }),
    limits,
  });
  await holdMoreThanTheCap(t, app, "/healthz");
});

t.test("the collector's serve", async (t) => {
  const s = buildServer({
    intervalMs: 3_600_000,
    gather: async () => ({ ok: false, error: "not in this test" }),
    log: () => undefined,
    limits,
  });
  await holdMoreThanTheCap(t, s.app, "/healthz");
});
