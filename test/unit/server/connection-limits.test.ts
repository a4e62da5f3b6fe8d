// The connection cap of both servers: the agent's and the collector's `serve`. Real sockets on
// loopback: past the cap each new connection is closed by the server at once, the held ones are
// closed by the header deadline, and the server answers once they are gone. The real-process case
// (a scan under the attack, a low fd limit) is test/e2e/agent-connections.test.ts.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import t, { type Test } from "tap";
import { AgentMetrics } from "../../../agent/metrics/agent-metrics.js";
import { buildApp } from "../../../agent/server/app.js";
import { readFileSync } from "node:fs";
import { connectionLimits, softFdLimit, sourceOf } from "../../../common/connection-limits.js";
import { hardenedFastify } from "../../../common/http-server.js";
import { AgentState } from "../../../agent/server/state.js";
import { buildServer } from "../../../collector/server.js";
import { selfSigned } from "../../helpers/self-signed.js";

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

t.test("one source holds at most a quarter of the cap; an IPv6 /64 is one source", async (t) => {
  t.equal(connectionLimits(null).maxPerSource, 32, "32 of 128");
  t.equal(connectionLimits(256).maxPerSource, 16, "16 of 64");
  t.equal(connectionLimits(16).maxPerSource, 2, "2 of 8");
  t.equal(connectionLimits(null).handshakeTimeoutMs, 10_000, "a TLS handshake within the header deadline");
  t.equal(sourceOf("10.0.0.7"), "10.0.0.7");
  t.equal(sourceOf("::ffff:10.0.0.7"), "10.0.0.7", "IPv4-mapped is the IPv4 address");
  t.equal(sourceOf("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64");
  t.equal(
    sourceOf("2001:0db8:0001:0002:ffff:0:0:9"),
    "2001:db8:1:2::/64",
    "written out or compressed, one /64",
  );
  t.equal(sourceOf("2001:db8::1"), "2001:db8:0:0::/64");
  t.equal(sourceOf("::1"), "0:0:0:0::/64");
  t.not(sourceOf("2001:db8:1:3::1"), sourceOf("2001:db8:1:2::1"), "another /64 is another source");
});

t.test(
  "over TLS, a connection that never sends a ClientHello is closed at the handshake deadline",
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), "proxyscope-handshake-"));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const pem = selfSigned(dir, "t");
    const app = hardenedFastify({
      https: { key: readFileSync(pem.key), cert: readFileSync(pem.cert) },
      limits: { ...connectionLimits(null), handshakeTimeoutMs: 1000 },
    });
    app.get("/healthz", async () => ({ ok: true }));
    await app.listen({ host: "127.0.0.1", port: 0 });
    t.teardown(() => app.close());
    const s = net.connect((app.server.address() as net.AddressInfo).port, "127.0.0.1");
    s.on("error", () => undefined);
    s.resume();
    t.teardown(() => s.destroy());
    // Node's own default is 120 s: a wide margin either way between the deadline and that.
    const closed = await Promise.race([
      new Promise<"closed by the server">((res) => s.once("close", () => res("closed by the server"))),
      new Promise<"still open after 60 s">((res) =>
        setTimeout(() => res("still open after 60 s"), 60_000).unref(),
      ),
    ]);
    t.equal(closed, "closed by the server");
  },
);

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

t.test("on a dual-stack listener each IPv4 client is its own source, not one IPv4-mapped /64", async (t) => {
  // Listening on "::", Node names every IPv4 peer ::ffff:a.b.c.d: counted as an IPv6 /64 those would
  // all be one source, and one host holding its share would lock out the kubelet and Prometheus.
  const app = hardenedFastify({
    limits: {
      ...connectionLimits(null),
      maxConnections: 8,
      maxPerSource: 2,
      // Held far longer than the test takes on a busy machine: the share, not a deadline, turns away.
      headersTimeoutMs: 60_000,
      requestTimeoutMs: 120_000,
    },
  });
  app.get("/healthz", async () => ({ ok: true }));
  await app.listen({ host: "::", port: 0 });
  t.teardown(() => app.close());
  const port = (app.server.address() as net.AddressInfo).port;
  const dial = () => {
    const s = net.connect({ port, host: "127.0.0.1", localAddress: "127.0.0.2" });
    s.on("error", () => undefined);
    s.resume();
    t.teardown(() => s.destroy());
    return s;
  };
  const held = [dial(), dial()];
  await Promise.all(held.map((s) => new Promise((r) => s.once("connect", r))));
  // The third from the same address is turned away: accepted in order, so the two are counted.
  const third = dial();
  await new Promise((r) => third.once("close", r));
  t.ok(
    held.every((s) => !s.destroyed),
    "the two within the share are held",
  );
  const status = await new Promise<number | string>((resolve) => {
    const req = http.get(
      { host: "127.0.0.1", port, path: "/healthz", localAddress: "127.0.0.1", agent: false },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
  t.equal(status, 200, "another IPv4 address still gets in");
});
