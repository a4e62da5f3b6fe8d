// The target decides which row an answer fills. With URL-only static targets an agent
// named itself: two agents claiming one name made the rollup keep one answer and drop the other row
// (a node vanished from a 17-target report), and an agent claiming a node another target names hid
// that node's failure behind its own "ok". Real loopback HTTP agents answering real NodeReports.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import t from "tap";
import { fleetDigestOf } from "../../../agent/contract.js";
import { rollup } from "../../../collector/plan/rollup.js";
import { fetchAgents, type AgentTarget } from "../../../collector/sources/agents.js";
import { emptyFacts } from "../../helpers/facts.js";
import { reportOf } from "../../helpers/reports.js";

/** A loopback agent answering /report and /report/fleet as node `claims`, or refusing (null). */
async function agent(claims: string | null): Promise<string> {
  const report = claims === null ? null : { ...reportOf(emptyFacts(), {}, new Date()), node: claims };
  const bodies: Record<string, string> = report
    ? { "/report": JSON.stringify(report), "/report/fleet": JSON.stringify(fleetDigestOf(report)) }
    : {};
  const s = createServer((req, res) => {
    if (report === null) return void res.writeHead(503).end("{}");
    const body = bodies[req.url ?? ""];
    if (body === undefined) return void res.writeHead(404).end("{}");
    res.writeHead(200, { "content-type": "application/json" }).end(body);
  });
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  t.teardown(() => {
    s.closeAllConnections();
    s.close();
  });
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

const opts = { timeoutMs: 10_000, concurrency: 4, maxBytes: 1024 * 1024 };
const fleet = (targets: AgentTarget[], obs: Awaited<ReturnType<typeof fetchAgents>>) =>
  rollup({
    source: "static",
    collectorVersion: "test",
    generatedAt: new Date(),
    cluster: null,
    observations: obs,
    missingOutcome: "no-agent",
  }).nodes.map((n) => [n.node, n.outcome]);

t.test("a named target answered for another node: wrong-node on the target's row", async (t) => {
  const url = await agent("node-b");
  const [o] = await fetchAgents([{ node: "node-a", url }], opts);
  t.equal(o?.node, "node-a", "the row is the target's");
  t.equal(o?.outcome, "wrong-node");
  t.match(o?.reason, /answered for node "node-b", not "node-a"/);
  t.equal(o?.phase, null, "nothing of the other node's answer is used");
});

t.test("two URL-only agents claiming one name: both rows stay, both named", async (t) => {
  const targets: AgentTarget[] = [
    { node: null, url: await agent("node-c") },
    { node: null, url: await agent("node-c") },
    { node: null, url: await agent("node-d") },
  ];
  const obs = await fetchAgents(targets, opts);
  t.same(
    fleet(targets, obs),
    [
      [targets[0]!.url, "wrong-node"],
      [targets[1]!.url, "wrong-node"],
      ["node-d", "ok"],
    ],
    "three targets, three rows: none merged away",
  );
  t.match(obs[0]?.reason, /says it is node "node-c", but 2 URL-only targets answered for that node/);
});

t.test("a URL-only agent claiming a named target's node cannot hide that node's failure", async (t) => {
  const targets: AgentTarget[] = [
    { node: "node-e", url: await agent(null) },
    { node: null, url: await agent("node-e") },
  ];
  const obs = await fetchAgents(targets, opts);
  t.same(fleet(targets, obs), [
    ["node-e", "http-status"],
    [targets[1]!.url, "wrong-node"],
  ]);
  t.match(obs[1]?.reason, /another target names that node.*"NODE URL"/);
});

t.test("an uncontested URL-only claim still names its row; a named target that agrees is ok", async (t) => {
  const targets: AgentTarget[] = [
    { node: null, url: await agent("node-f") },
    { node: "node-g", url: await agent("node-g") },
  ];
  const obs = await fetchAgents(targets, opts);
  t.same(
    obs.map((o) => [o.node, o.outcome, o.reason]),
    [
      ["node-f", "ok", null],
      ["node-g", "ok", null],
    ],
  );
});
