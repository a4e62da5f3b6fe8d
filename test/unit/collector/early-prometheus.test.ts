import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import t from "tap";
import { loadConfig } from "../../../collector/config.js";
import { startPrometheus } from "../../../collector/gather/from-prometheus.js";
import { gather } from "../../../collector/gather/gather.js";
import { queries } from "../../../collector/sources/prometheus.js";

// The CLI sends a Prometheus report's queries before the report's own modules load; gather() must take
// those up, never send them a second time, and nothing but a Prometheus gather may start them.

t.test("queries started before the gather are the gather's: each sent once", async (t) => {
  const asked: string[] = [];
  const empty = JSON.stringify({ status: "success", data: { resultType: "vector", result: [] } });
  const matrix = JSON.stringify({ status: "success", data: { resultType: "matrix", result: [] } });
  const server = createServer((req, res) => {
    asked.push(req.url!);
    res.end(req.url!.startsWith("/api/v1/query_range") ? matrix : empty);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const cfg = loadConfig(
    ["--source", "prometheus", "--prometheus-url", url, "--kubeconfig", "/nonexistent/kubeconfig"],
    {},
    "report",
  );
  const early = startPrometheus(cfg);
  t.ok(early, "started");
  t.equal(startPrometheus(cfg), early, "the same promise for the same gather");
  const r = await gather(cfg);
  t.notOk(r.ok, "no API server: no report");
  await early;
  const instant = asked.filter((u) => u.startsWith("/api/v1/query?"));
  t.equal(instant.length, Object.keys(queries("node")).length, "each instant query once");
  t.equal(asked.length - instant.length, 1, "the burn-down's range query once");
  t.equal(new Set(instant).size, instant.length);
  // The next gather of the same config (serve's, every interval) asks afresh, never the old answers.
  const next = startPrometheus(cfg);
  t.not(next, early, "taken by the gather: a new start is a new promise");
  await gather(cfg);
  await next;
  const again = asked.filter((u) => u.startsWith("/api/v1/query?"));
  t.equal(again.length, 2 * instant.length, "the second gather's queries, sent once");
});

t.test("only a Prometheus gather of live data starts them", async (t) => {
  const prom = ["--source", "prometheus", "--prometheus-url", "http://127.0.0.1:1"];
  t.equal(startPrometheus(loadConfig(["--source", "static", "--agents", "http://a"], {}, "report")), null);
  const live = loadConfig(prom, {}, "report");
  t.equal(startPrometheus({ ...live, demo: true }), null);
  t.equal(startPrometheus({ ...live, fromFiles: ["/tmp"] }), null);
});
