import t from "tap";
import { request } from "node:http";
import { gunzipSync } from "node:zlib";
import { AgentMetrics } from "../../../agent/metrics/agent-metrics.js";
import { renderScan } from "../../../agent/server/rendered-scan.js";
import { NodeReport } from "../../../agent/report/schema.js";
import { buildApp } from "../../../agent/server/app.js";
import type { VirtualServerLookup } from "../../../agent/server/ipvs-lookup.js";
import type { VirtualServerQuery } from "../../../agent/server/ipvs-query.js";
import { AgentState } from "../../../agent/server/state.js";
import { vs } from "../../helpers/facts.js";
import { movedWithBlackHole, reportOf } from "../../helpers/reports.js";

function setup(lookup?: VirtualServerLookup) {
  let now = 1_000_000;
  const state = new AgentState(new AgentMetrics({ version: "0.1.0" }), () => now);
  const asked: VirtualServerQuery[] = [];
  const app = buildApp(state, {
    retryAfterS: 60,
    lookupVirtualServer:
      lookup ??
      (async (q) => {
        asked.push(q);
        if (q.address !== "10.96.0.10") return { status: "not-found" };
        return {
          status: "found",
          virtualServer: vs("10.96.0.10", 53, { protocol: q.protocol, realServers: 2 }),
          realServers: [
            {
              family: "inet",
              address: "10.244.1.5",
              port: 53,
              forward: "Masq",
              weight: 1,
              activeConns: 0,
              inactiveConns: 3,
            },
            {
              family: "inet",
              address: "10.244.2.9",
              port: 53,
              forward: "Masq",
              weight: 1,
              activeConns: 1,
              inactiveConns: 0,
            },
          ],
        };
      }),
  });
  return { state, app, asked, tick: (ms: number) => (now += ms) };
}

t.test("before the first scan: alive, not ready, /report 503 in JSON", async (t) => {
  const { app } = setup();
  t.teardown(() => app.close());
  t.equal((await app.inject("/healthz")).statusCode, 200);
  const ready = await app.inject("/readyz");
  t.equal(ready.statusCode, 503);
  const r = await app.inject("/report");
  t.equal(r.statusCode, 503);
  t.match(r.headers["content-type"], /^application\/json/);
  t.equal(r.headers["retry-after"], "60");
  t.same(r.json(), { error: "no scan has completed yet" });
  t.equal((await app.inject("/report/previous")).statusCode, 503);
  const m = await app.inject("/metrics");
  t.equal(m.statusCode, 200);
  t.notMatch(m.body, /proxyscope_node_phase/, "no node gauges before a scan");
});

t.test("after scans: /report is a valid NodeReport with its age in a header", async (t) => {
  const { app, state, tick } = setup();
  t.teardown(() => app.close());
  const first = reportOf(movedWithBlackHole());
  state.record(await renderScan(first));
  tick(2500);
  const r = await app.inject("/report");
  t.equal(r.statusCode, 200);
  t.equal(r.headers["x-report-age-seconds"], "2.500");
  t.equal(r.headers["cache-control"], "no-store");
  const body = NodeReport.parse(r.json());
  t.same(body, first, "the body is exactly the report, no wrapper");
  t.equal((await app.inject("/readyz")).statusCode, 200);

  const second = reportOf(movedWithBlackHole({ proxyMode: { mode: "ipvs" } }));
  state.record(await renderScan(second));
  t.equal((await app.inject("/report")).json().phase, "ipvs");
  const prev = await app.inject("/report/previous");
  t.equal(prev.statusCode, 200);
  t.equal(prev.json().phase, "nftables", "the previous report is kept");
  t.equal(prev.headers["x-report-age-seconds"], "2.500");
});

t.test("/report/schema is the NodeReport JSON Schema", async (t) => {
  const { app } = setup();
  t.teardown(() => app.close());
  const r = await app.inject("/report/schema");
  t.equal(r.statusCode, 200);
  const s = r.json();
  t.match(s, { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object" });
  t.ok(s.required.includes("schemaVersion"));
});

t.test("/metrics is the Prometheus text format from the last scan", async (t) => {
  const { app, state } = setup();
  t.teardown(() => app.close());
  state.record(await renderScan(reportOf(movedWithBlackHole())));
  const r = await app.inject("/metrics");
  t.match(r.headers["content-type"], /^text\/plain; version=0\.0\.4/);
  t.match(r.body, /^proxyscope_black_holed_addresses 3$/m);
  t.match(r.body, /^proxyscope_scans_total 1$/m);
});

t.test("unknown paths, wrong methods, bodies on GET: JSON errors that echo nothing", async (t) => {
  const { app } = setup();
  t.teardown(() => app.close());
  const nf = await app.inject("/%3Cscript%3Ealert(1)%3C/script%3E");
  t.equal(nf.statusCode, 404);
  t.same(nf.json(), { error: "not found" });
  const bad = await app.inject("/report%zz");
  t.equal(bad.statusCode, 400);
  t.notMatch(bad.body, /%zz/);
  const post = await app.inject({ method: "POST", url: "/report", payload: { a: 1 } });
  t.equal(post.statusCode, 405);
  t.equal(post.headers.allow, "GET, HEAD");
  t.same(post.json(), { error: "method not allowed" });
  const del = await app.inject({ method: "DELETE", url: "/metrics" });
  t.equal(del.statusCode, 405);
  const big = await app.inject({
    method: "POST",
    url: "/nowhere",
    payload: "x".repeat(100_000),
    headers: { "content-type": "text/plain" },
  });
  t.ok(big.statusCode === 404 || big.statusCode === 413, `status ${big.statusCode}`);
  t.notMatch(big.body, /xxxx/);
  const weird = await app.inject({
    method: "POST",
    url: "/report",
    payload: "x",
    headers: { "content-type": "application/<b>evil" },
  });
  t.notMatch(weird.body, /evil/);
  const getBody = await app.inject({
    method: "GET",
    url: "/report",
    payload: "hello",
    headers: { "content-type": "text/plain" },
  });
  t.equal(getBody.statusCode, 400);
  t.same(getBody.json(), { error: "a GET request carries no body" });
  for (const r of [nf, bad, post, big, weird, getBody]) {
    t.match(r.headers["content-type"], /^application\/json/);
    t.notMatch(r.body, /at .*\.(ts|js):\d+/, "no stack trace");
  }
});

t.test("/ipvs/virtual-server: strict query, one virtual server's real servers", async (t) => {
  const { app, asked } = setup();
  t.teardown(() => app.close());
  const ok = await app.inject("/ipvs/virtual-server?protocol=TCP&address=10.96.0.10&port=53");
  t.equal(ok.statusCode, 200);
  t.equal(ok.json().realServers.length, 2);
  t.match(ok.json().realServers[0], {
    address: "10.244.1.5",
    port: 53,
    forward: "Masq",
    weight: 1,
    activeConns: 0,
    inactiveConns: 3,
  });
  t.same(asked[0], { protocol: "TCP", address: "10.96.0.10", port: 53 });

  await app.inject("/ipvs/virtual-server?protocol=UDP&address=FD00:0:0::A&port=53");
  t.equal(asked[1]?.address, "fd00::a", "IPv6 compared in its canonical form");

  const missing = await app.inject("/ipvs/virtual-server?protocol=TCP&address=10.96.0.11&port=53");
  t.equal(missing.statusCode, 404);
  t.same(missing.json(), { error: "no such virtual server" });

  const before = asked.length;
  for (const q of [
    "",
    "protocol=tcp&address=10.96.0.10&port=53",
    "protocol=TCP&address=10.96.0.300&port=53",
    "protocol=TCP&address=10.96.0.10&port=0",
    "protocol=TCP&address=10.96.0.10&port=65536",
    "protocol=TCP&address=10.96.0.10&port=5e1",
    "protocol=TCP&address=10.96.0.10&port=53&port=54",
    "protocol=TCP&address=10.96.0.10&port=53&%3Cimg%3E=1",
    "protocol=%3Cscript%3E&address=%3Cscript%3E&port=53",
    "protocol=FWM&address=10.96.0.10&port=53",
  ]) {
    const r = await app.inject(`/ipvs/virtual-server?${q}`);
    t.equal(r.statusCode, 400, q);
    t.equal(r.json().error, "invalid query");
    t.notMatch(r.body, /script|img|300|5e1/, "nothing echoed");
  }
  t.equal(asked.length, before, "an invalid query never reaches the kernel");
});

t.test("/ipvs/virtual-server: IPVS absent and read failures are told apart", async (t) => {
  const absent = setup(async () => ({ status: "ipvs-absent" }));
  t.teardown(() => absent.app.close());
  const a = await absent.app.inject("/ipvs/virtual-server?protocol=TCP&address=10.96.0.10&port=53");
  t.equal(a.statusCode, 404);
  t.match(a.json().error, /IPVS is not loaded/);
  const broken = setup(async () => ({
    status: "failed",
    error: { kind: "not-permitted", message: "/proc/net/ip_vs: EACCES", command: "/proc/net/ip_vs" },
  }));
  t.teardown(() => broken.app.close());
  const b = await broken.app.inject("/ipvs/virtual-server?protocol=TCP&address=10.96.0.10&port=53");
  t.equal(b.statusCode, 503);
  t.same(b.json(), { error: "could not read the IPVS table", kind: "not-permitted" });
});

t.test("over a real socket", async (t) => {
  const { app, state } = setup();
  t.teardown(() => app.close());
  state.record(await renderScan(reportOf(movedWithBlackHole())));
  await app.listen({ host: "127.0.0.1", port: 0 });
  const { port } = app.server.address() as { port: number };
  const r = await fetch(`http://127.0.0.1:${port}/report`);
  t.equal(r.status, 200);
  t.ok(r.headers.get("x-report-age-seconds"));
  NodeReport.parse(await r.json());
  const m = await fetch(`http://127.0.0.1:${port}/metrics`);
  t.match(await m.text(), /proxyscope_node_verdict\{verdict="unhealthy"\} 1/);
  const h = await fetch(`http://127.0.0.1:${port}/healthz`, { method: "HEAD" });
  t.equal(h.status, 200);
});

t.test("/metrics is gzip for a scraper that asks for it (Prometheus does), identity otherwise", async (t) => {
  const { app, state } = setup();
  t.teardown(() => app.close());
  state.record(await renderScan(reportOf(movedWithBlackHole())));
  await app.listen({ host: "127.0.0.1", port: 0 });
  const { port } = app.server.address() as { port: number };
  // node:http, not fetch: fetch would undo the encoding before the test could see it.
  const get = (headers: Record<string, string>) =>
    new Promise<{ headers: import("node:http").IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port, path: "/metrics", headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end();
    });
  // Prometheus' own scrape header (scrape/scrape.go, acceptEncodingHeader).
  const gz = await get({ "accept-encoding": "gzip" });
  t.equal(gz.headers["content-encoding"], "gzip");
  t.match(gz.headers.vary, /accept-encoding/i);
  t.match(gz.headers["content-type"], /^text\/plain; version=0\.0\.4/);
  const text = gunzipSync(gz.body).toString("utf8");
  t.match(text, /^proxyscope_black_holed_addresses 3$/m);
  const plain = await get({ "accept-encoding": "identity" });
  t.equal(plain.headers["content-encoding"], undefined);
  t.match(plain.headers.vary, /accept-encoding/i);
  t.equal(plain.body.toString("utf8"), text);
  const refused = await get({ "accept-encoding": "gzip;q=0, identity" });
  t.equal(refused.headers["content-encoding"], undefined);
  const none = await get({});
  t.equal(none.headers["content-encoding"], undefined);
  t.equal(none.body.toString("utf8"), text);
});

t.test("/metrics is compressed once per render, not per scrape", async (t) => {
  const m = new AgentMetrics({ version: "0.1.0" });
  m.recordScan((await renderScan(reportOf(movedWithBlackHole()))).metrics);
  const a = await m.expositionGzip();
  t.equal(await m.expositionGzip(), a, "the same bytes object for every scrape of one render");
  t.equal(gunzipSync(a).toString("utf8"), await m.exposition());
  m.recordOverrun();
  t.not(await m.expositionGzip(), a, "a new render compresses anew");
});
