import t from "tap";
import { gunzipSync } from "node:zlib";
import { rollup } from "../../../collector/plan/rollup.js";
import { buildServer } from "../../../collector/server.js";
import { FleetReport } from "../../../collector/report/schema.js";
import { apiNode, input, ok } from "../../helpers/fleet.js";

t.test("serve: last good report as JSON and HTML, fleet gauges on /metrics", async (t) => {
  let n = 0;
  const report = rollup(input([ok("a", "ipvs", "ready")], [apiNode("a"), apiNode("b")]));
  const s = buildServer({
    intervalMs: 3_600_000,
    gather: async () => (n++ === 0 ? { ok: true, report } : { ok: false, error: "API down" }),
    log: () => {},
  });
  t.teardown(() => s.app.close());
  t.equal((await s.app.inject({ url: "/report" })).statusCode, 503, "nothing before the first gather");
  s.start();
  s.stop();
  await new Promise((r) => setTimeout(r, 50));
  const rep = await s.app.inject({ url: "/report" });
  t.equal(rep.statusCode, 200);
  t.equal(FleetReport.parse(rep.json()).summary.nodes, 2);
  t.match((await s.app.inject({ url: "/" })).body, /<!doctype html>/);
  const m = (await s.app.inject({ url: "/metrics" })).body;
  t.match(m, /proxyscope_fleet_nodes\{phase="ipvs"\} 1/);
  t.match(m, /proxyscope_fleet_nodes\{phase="no-report"\} 1/);
  t.match(m, /proxyscope_fleet_nodes_by_verdict\{verdict="ready"\} 1/);
  t.match(m, /proxyscope_fleet_nodes_unreachable 1/);
  t.match(m, /proxyscope_fleet_last_gather_success 1/);
});

t.test("serve: the fleet report answers loopback only unless --detail-from any", async (t) => {
  const report = rollup(input([ok("a", "ipvs", "ready")], [apiNode("a")]));
  for (const detailFrom of ["loopback", "any", undefined] as const) {
    const s = buildServer({
      intervalMs: 3_600_000,
      gather: async () => ({ ok: true, report }),
      log: () => {},
      ...(detailFrom ? { detailFrom } : {}),
    });
    t.teardown(() => s.app.close());
    s.start();
    s.stop();
    await new Promise((r) => setTimeout(r, 50));
    const open = detailFrom === "any";
    for (const url of ["/report", "/", "/%72eport"]) {
      const remote = await s.app.inject({ url, remoteAddress: "10.1.2.3" });
      t.equal(
        remote.statusCode,
        open ? 200 : 403,
        `${url} from 10.1.2.3, --detail-from ${detailFrom ?? "(default)"}`,
      );
      t.equal(
        (await s.app.inject({ url, remoteAddress: "127.0.0.1" })).statusCode,
        200,
        `${url} from loopback`,
      );
    }
    for (const url of ["/healthz", "/metrics"])
      t.equal((await s.app.inject({ url, remoteAddress: "10.1.2.3" })).statusCode, 200, `${url} open`);
  }
});

t.test("serve: /metrics is gzip for a scraper that asks for it, identity otherwise", async (t) => {
  const report = rollup(input([ok("a", "ipvs", "ready")], [apiNode("a")]));
  const s = buildServer({ intervalMs: 3_600_000, gather: async () => ({ ok: true, report }), log: () => {} });
  t.teardown(() => s.app.close());
  s.start();
  s.stop();
  await new Promise((r) => setTimeout(r, 50));
  // Prometheus' own scrape header (scrape/scrape.go, acceptEncodingHeader).
  const gz = await s.app.inject({ url: "/metrics", headers: { "accept-encoding": "gzip" } });
  t.equal(gz.headers["content-encoding"], "gzip");
  t.match(gz.headers.vary, /accept-encoding/i);
  t.match(gunzipSync(gz.rawPayload).toString("utf8"), /proxyscope_fleet_nodes\{phase="ipvs"\} 1/);
  const plain = await s.app.inject({ url: "/metrics", headers: { "accept-encoding": "identity" } });
  t.equal(plain.headers["content-encoding"], undefined);
  t.match(plain.headers.vary, /accept-encoding/i);
  t.match(plain.body, /proxyscope_fleet_nodes\{phase="ipvs"\} 1/);
});
