// The collector's memory was capped per answer, not in total — 12 agents answering 16 MiB each took
// it to 578 MB, past its 512 Mi limit. Twelve loopback STAND-IN agents answer huge bodies (eight under
// the 4 MiB cap, four over it) to one gather with 12 readers; the gather's byte budget
// is instrumented (no RSS, no timing): what it held never passed its total, every node is in the
// result with a named failure, and nothing stays held afterwards.
import t from "tap";
import { ByteBudget, gatherBudget } from "../../collector/gather/byte-budget.js";
import { DEFAULT_MAX_REPORT_BYTES, fetchAgents, type AgentTarget } from "../../collector/sources/agents.js";
import { freePort } from "../helpers/prometheus.js";
import { startAgent } from "./collector-fleet.js";

const MiB = 1024 * 1024;
const port = await freePort();
const agents = Array.from({ length: 12 }, (_, i) => ({
  node: `node-${i}`,
  ip: `127.0.0.${150 + i}`,
  bytes: i % 3 === 2 ? 5 * MiB : 3.5 * MiB,
}));
const stops = await Promise.all(agents.map((a) => startAgent(a.ip, port, { hugeBytes: a.bytes })));
t.teardown(() => Promise.all(stops.map((s) => s())));
const targets: AgentTarget[] = agents.map((a) => ({ node: a.node, url: `http://${a.ip}:${port}` }));

t.test("12 huge answers at once stay inside the gather's byte budget; every node is named", async (t) => {
  const budget = gatherBudget({ perAnswer: DEFAULT_MAX_REPORT_BYTES });
  t.ok(budget.total < 12 * 3.5 * MiB, "the budget is below what 12 answers would hold at once");
  const obs = await fetchAgents(targets, {
    // Healthy (if huge) answers: a deadline no loaded machine gets near, so none ends as a timeout.
    timeoutMs: 300_000,
    concurrency: 12,
    maxBytes: DEFAULT_MAX_REPORT_BYTES,
    budget,
  });
  t.comment(
    `budget ${budget.total / MiB} MiB: peak reserved ${(budget.peakReserved / MiB).toFixed(1)} MiB, peak read ${(budget.peakUsed / MiB).toFixed(1)} MiB`,
  );
  t.ok(budget.peakReserved <= budget.total, "never more reserved than the budget");
  t.ok(budget.peakUsed <= budget.total, "never more bytes held than the budget");
  t.ok(budget.peakUsed >= 3.5 * MiB, "whole answers were held (the budget really counted them)");
  t.equal(budget.reserved, 0, "everything released");
  t.equal(budget.used, 0);
  t.same(
    obs.map((o) => o.node),
    agents.map((a) => a.node),
    "every node is in the result, in order",
  );
  agents.forEach((a, i) => {
    const o = obs[i]!;
    t.equal(o.outcome, "garbage", `${a.node}: ${o.reason}`);
    t.match(
      o.reason,
      a.bytes > DEFAULT_MAX_REPORT_BYTES
        ? /answer too large: .*answered more than 4194304 bytes/
        : /not a NodeReport/,
      `${a.node} names why`,
    );
  });
});

t.test("a reader waiting for room gives up at its deadline with a named timeout", async (t) => {
  // Room for one whole answer, held here and never freed: a wait that never ends, ended by the deadline.
  const budget = new ByteBudget({ total: 5 * MiB, perAnswer: DEFAULT_MAX_REPORT_BYTES, initial: MiB });
  const hold = budget.lease();
  await hold.add(2 * MiB, new AbortController().signal); // now holds the whole per-answer cap
  const [o] = await fetchAgents(targets.slice(0, 1), {
    timeoutMs: 10_000,
    concurrency: 1,
    maxBytes: DEFAULT_MAX_REPORT_BYTES,
    budget,
  });
  t.equal(o?.node, "node-0");
  t.equal(o?.outcome, "timeout");
  t.match(o?.reason, /waiting for room in the memory budget/);
  hold.release();
  t.equal(budget.reserved, 0, "the waiter's first reservation is released too");
});
