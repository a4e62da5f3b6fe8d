import t from "tap";
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import {
  behaviour,
  liveAnswer,
  recorded as bodiesOf,
  standInServer,
  template,
} from "../../../bench/fleet/agents.js";
import { fleetDigestOf, NodeReport } from "../../../agent/contract.js";
import { fetchAgent } from "../../../collector/sources/agents.js";

// The fleet benchmark's stand-in agents answer as a live agent does (agent/server/app.ts): a healthy
// node's report is its last scan's, not the recorded one's days-old scan time, or the collector
// rightly calls 9 in 10 of the fleet stale and the benchmark measures the wrong outcomes.
const recorded = JSON.parse(
  readFileSync(new URL("../../../bench/results/samples/nft-100.report.json", import.meta.url), "utf8"),
) as { node: string; scannedAt: string; scanDurationMs: number };

t.test("a healthy stand-in answers with a fresh scan time and its age in a header", async (t) => {
  const now = Date.parse(recorded.scannedAt) + 30 * 86400_000;
  const a = liveAnswer(template(recorded), 3, now);
  const body = JSON.parse(Buffer.concat(a.chunks).toString("utf8")) as typeof recorded;
  t.equal(body.node, "node-3");
  const age = Number(a.headers["x-report-age-seconds"]);
  t.ok(age >= 0 && age < 60, `age ${age} s within one scan interval`);
  t.equal(Date.parse(body.scannedAt), now - age * 1000 - recorded.scanDurationMs);
  t.equal(Number(a.headers["content-length"]), Buffer.concat(a.chunks).length);
  t.same({ ...body, node: recorded.node, scannedAt: recorded.scannedAt }, recorded, "the rest as recorded");
});

t.test("the collector judges a healthy stand-in ok, and its faults by name", async (t) => {
  const server = standInServer([bodiesOf(recorded)]);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const port = (server.address() as AddressInfo).port;
  const first = (b: string) => Array.from({ length: 1000 }, (_, i) => i).find((i) => behaviour(i) === b)!;
  const get = (i: number) =>
    fetchAgent(
      { node: `node-${i}`, url: `http://127.0.0.1:${port}/node-${i}` },
      { timeoutMs: 60_000, maxBytes: 16 * 2 ** 20 },
    );
  const ok = await get(first("ok"));
  t.equal(ok.outcome, "ok");
  t.match(ok.endpoint, /\/report\/fleet$/, "the collector reads the stand-in's FleetDigest");
  t.equal((await get(first("slow"))).outcome, "ok");
  t.equal((await get(first("garbage"))).outcome, "garbage");
  t.equal((await get(first("error"))).outcome, "http-status");
});

t.test(
  "the stand-in's /report/fleet is the agent's digest of its /report, one scan time for both",
  async (t) => {
    const server = standInServer([bodiesOf(recorded)], () => Date.parse(recorded.scannedAt) + 86400_000);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    t.teardown(() => new Promise<void>((r) => server.close(() => r())));
    const firstOk = Array.from({ length: 1000 }, (_, i) => i).find((i) => behaviour(i) === "ok")!;
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/node-${firstOk}`;
    const [report, fleet] = await Promise.all(
      ["/report", "/report/fleet"].map((p) => fetch(`${base}${p}`).then((r) => r.json())),
    );
    t.same(fleet, JSON.parse(JSON.stringify(fleetDigestOf(NodeReport.parse(report)))));
  },
);
