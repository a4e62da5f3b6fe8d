// The fleet digest: the agent serves a FleetDigest on /report/fleet, rendered once per scan, and the
// collector reads it (validated whole) instead of the ~180 KB /report; an agent older than the route
// answers 404 there and is read on /report, as before, so a DaemonSet mid-rollout keeps working.
import { createServer } from "node:http";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { AddressInfo } from "node:net";
import t from "tap";
import { fleetDigestOf, FleetDigest, type NodeReport } from "../../../agent/contract.js";
import { AgentMetrics } from "../../../agent/metrics/agent-metrics.js";
import { buildApp } from "../../../agent/server/app.js";
import { renderScan } from "../../../agent/server/rendered-scan.js";
import { AgentState } from "../../../agent/server/state.js";
import {
  observationFromDigest,
  observationFromReport,
  parseFleetDigest,
  parseNodeReport,
} from "../../../collector/gather/observe.js";
import { fetchAgents } from "../../../collector/sources/agents.js";
import { emptyFacts, metrics, noKernelState } from "../../helpers/facts.js";
import { movedWithBlackHole, reportOf } from "../../helpers/reports.js";
import { NOW } from "../../helpers/rules.js";

const switchedWithParity = (): NodeReport =>
  reportOf(
    emptyFacts({
      ...noKernelState,
      kernel: { release: "6.8.0-1015-aws", major: 6, minor: 8, patch: 0 },
      proxyMode: { mode: "nftables" },
      kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 5 }),
      parity: {
        state: "compared",
        path: "/var/lib/proxyscope/ipvs-snapshot.json",
        takenAt: NOW - 900,
        ageSeconds: 900,
        maxAgeSeconds: 86_400,
        counts: { same: 8, missingAfter: 1, endpointsDiffer: 1, newAfter: 0, arpOnly: 1 },
        services: [
          {
            service: null,
            protocol: "TCP",
            addresses: ["10.96.0.20:80", "nodeport:30080"],
            status: "missing-after",
            endpointsBefore: 1,
            endpointsAfter: 0,
            gone: [],
            added: [],
          },
          {
            service: "web/ext:http",
            protocol: "TCP",
            addresses: ["192.168.1.50:80"],
            status: "arp-only",
            endpointsBefore: 1,
            endpointsAfter: 1,
            gone: [],
            added: [],
          },
          {
            service: "web/api:https",
            protocol: "TCP",
            addresses: ["10.96.0.30:443"],
            status: "endpoints-differ",
            endpointsBefore: 2,
            endpointsAfter: 1,
            gone: ["10.244.1.9:8443"],
            added: [],
            after: ["10.244.2.4:8443"],
          },
        ],
        truncated: false,
      },
    }),
    {},
    new Date(NOW * 1000),
  );

const REPORTS: [string, () => NodeReport][] = [
  ["moved with a black hole", () => reportOf(movedWithBlackHole())],
  ["switched, parity compared", switchedWithParity],
  ["nothing read", () => reportOf({}, { kernel: { kind: "unreachable", message: "x" } })],
];

t.test("a digest is read exactly as the report it was made of", async (t) => {
  for (const [name, make] of REPORTS) {
    const r = make();
    const full = parseNodeReport(JSON.stringify(r));
    const digest = parseFleetDigest(JSON.stringify(fleetDigestOf(r)));
    if (!full.ok || !digest.ok) {
      t.fail(`${name}: ${full.ok ? "" : full.reason} ${digest.ok ? "" : digest.reason}`);
      continue;
    }
    t.same(
      observationFromDigest(digest.digest, "u", "n1"),
      observationFromReport(full.report, "u", "n1"),
      `${name}: one observation by either route`,
    );
  }
  const p = fleetDigestOf(switchedWithParity()).parity;
  t.same(p?.lost, ["10.96.0.20:80/TCP", "nodeport:30080/TCP"]);
  t.same(p?.arpOnly, ["192.168.1.50:80/TCP"], "reached only by ARP before: its own list, not served");
  t.equal(
    fleetDigestOf(reportOf(movedWithBlackHole())).parity?.arpOnly,
    undefined,
    "not compared: not known",
  );
  t.same(
    p?.differ.map((d) => [d.service, d.after]),
    [["web/api:https", ["10.244.2.4:8443"]]],
  );
});

t.test("the agent renders it once per scan and serves it as /report, with its age", async (t) => {
  let now = 1_000_000;
  const state = new AgentState(new AgentMetrics({ version: "0.1.0" }), () => now);
  const app = buildApp(state, {
    retryAfterS: 60,
    lookupVirtualServer: async () => ({ status: "not-found" }),
  });
  t.teardown(() => app.close());
  t.equal((await app.inject("/report/fleet")).statusCode, 503, "no digest before the first scan");
  const r = reportOf(movedWithBlackHole());
  const scan = await renderScan(r);
  t.same(JSON.parse(Buffer.from(scan.fleet).toString("utf8")), JSON.parse(JSON.stringify(fleetDigestOf(r))));
  state.record(scan);
  now += 2500;
  const res = await app.inject("/report/fleet");
  t.equal(res.statusCode, 200);
  t.equal(res.headers["x-report-age-seconds"], "2.500");
  t.ok(res.headers["last-modified"]);
  const d = FleetDigest.strict().parse(res.json());
  t.equal(d.node, r.node);
  t.same(d.findings, r.findings, "findings whole, evidence and remedy included");
  t.ok(res.body.length < (await app.inject("/report")).body.length, "smaller than the report");
  const schema = await app.inject("/report/fleet/schema");
  t.equal(schema.statusCode, 200);
  t.match(schema.json(), { properties: { schemaVersion: { const: "1" }, findings: {} } });
  // The published JSON Schema, read by an independent validator, accepts what the route serves.
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  const validate = ajv.compile(schema.json() as object);
  t.ok(validate(res.json()), JSON.stringify(validate.errors));
  t.notOk(validate({ ...res.json(), verdict: "fine" }), "and refuses a verdict it does not know");
});

// Fresh (not stale) and the same for every agent of a test run.
const AT = new Date();

/** Loopback agents: a current one (both routes) or an older one (404 on /report/fleet); paths asked are logged. */
async function agent(node: string, o: { older?: boolean; fleetBody?: string; fleetStatus?: number } = {}) {
  const r = { ...reportOf(movedWithBlackHole(), {}, AT), node };
  const asked: string[] = [];
  const s = createServer((req, res) => {
    asked.push(req.url ?? "");
    if (req.url === "/report") return void res.writeHead(200).end(JSON.stringify(r));
    if (req.url === "/report/fleet" && !o.older)
      return void res.writeHead(o.fleetStatus ?? 200).end(o.fleetBody ?? JSON.stringify(fleetDigestOf(r)));
    res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}');
  });
  await new Promise<void>((ok) => s.listen(0, "127.0.0.1", ok));
  t.teardown(() => {
    s.closeAllConnections();
    s.close();
  });
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, asked };
}

const opts = { timeoutMs: 10_000, concurrency: 4, maxBytes: 1024 * 1024 };

t.test(
  "a fleet mid-rollout: the current agent is asked its digest only, the older one falls back to /report",
  async (t) => {
    const current = await agent("n-new");
    const older = await agent("n-old", { older: true });
    const obs = await fetchAgents(
      [
        { node: "n-new", url: current.url },
        { node: "n-old", url: older.url },
      ],
      opts,
    );
    t.same(
      obs.map((o) => [o.node, o.outcome, o.endpoint]),
      [
        ["n-new", "ok", `${current.url}/report/fleet`],
        ["n-old", "ok", `${older.url}/report`],
      ],
    );
    t.same(current.asked, ["/report/fleet"], "one call, the whole report never asked");
    t.same(older.asked, ["/report/fleet", "/report"], "404 there, then the report");
    const [a, b] = obs;
    t.same({ ...a, node: "x", endpoint: null }, { ...b, node: "x", endpoint: null }, "the same reading");
  },
);

t.test("a digest is validated whole: broken anywhere is garbage, not a partial ok", async (t) => {
  const good = JSON.parse(JSON.stringify(fleetDigestOf(reportOf(movedWithBlackHole(), {}, new Date()))));
  const broken: [string, unknown, RegExp][] = [
    ["not JSON", "\u001b[2J<html>", /not JSON/],
    [
      "a finding's severity",
      { ...good, findings: [{ ...good.findings[0], severity: "fatal" }] },
      /findings\.0\.severity/,
    ],
    [
      "a finding without its remedy",
      { ...good, findings: [{ ...good.findings[0], remedy: undefined }] },
      /remedy/,
    ],
    ["a count", { ...good, kubeIpvs0Addresses: "3" }, /kubeIpvs0Addresses/],
    ["the kernel", { ...good, kernelRelease: 6 }, /kernelRelease/],
    ["a full NodeReport where the digest belongs", reportOf(movedWithBlackHole()), /not a FleetDigest/],
  ];
  for (const [name, body, reason] of broken) {
    const a = await agent("n1", { fleetBody: typeof body === "string" ? body : JSON.stringify(body) });
    const [o] = await fetchAgents([{ node: "n1", url: a.url }], opts);
    t.equal(o?.outcome, "garbage", name);
    t.match(o?.reason, reason, name);
    t.same(a.asked, ["/report/fleet"], `${name}: garbage is not a reason to ask /report`);
  }
  const v2 = await agent("n1", { fleetBody: JSON.stringify({ ...good, schemaVersion: "2" }) });
  const [m] = await fetchAgents([{ node: "n1", url: v2.url }], opts);
  t.match(m, { outcome: "schema-mismatch", reason: /FleetDigest schemaVersion "2"; this collector reads 1/ });
  const e500 = await agent("n1", { fleetStatus: 500, fleetBody: "{}" });
  const [s] = await fetchAgents([{ node: "n1", url: e500.url }], opts);
  t.match(s, { outcome: "http-status", reason: /report\/fleet answered HTTP 500/ });
  t.same(e500.asked, ["/report/fleet", "/report/fleet"], "a 5xx is retried once, and is no 404");
});

t.test("a newer agent's digest: an unknown parity shape reads as not read, the node kept", async (t) => {
  const d = JSON.parse(JSON.stringify(fleetDigestOf(switchedWithParity())));
  d.parity = { state: "some-future-state", extra: 1 };
  d.someFutureField = true;
  const p = parseFleetDigest(JSON.stringify(d));
  t.equal(p.ok, true);
  if (!p.ok) return;
  const o = observationFromDigest(p.digest, null, "n1", p.unknown);
  t.equal(o.parity, null);
  t.same(o.unknownToCollector, ["facts.parity"]);
  t.equal(o.phase, "nftables", "the rest is read");
});
