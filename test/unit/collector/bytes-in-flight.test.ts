import t from "tap";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { gatherBudget } from "../../../collector/gather/byte-budget.js";
import { fetchAgents, type AgentTarget } from "../../../collector/sources/agents.js";

// The gather bounds the bytes in flight, not the calls. An agent that has not answered
// holds no room, so slow and hung agents do not keep answering ones waiting; an answer takes its
// declared length once its headers arrive. Asserted on the budget's own counters, never on time.
const KiB = 1024;
const BODY = 300 * KiB;

t.test("calls that have not answered hold no bytes; an answer reserves its declared length", async (t) => {
  const s = createServer((req, res) => {
    if (req.url?.startsWith("/hung")) return; // never answers
    res.writeHead(200, { "content-type": "application/json", "content-length": String(BODY) });
    res.end(`"${"x".repeat(BODY - 2)}"`);
  });
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  t.teardown(() => {
    s.closeAllConnections();
    s.close();
  });
  const base = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  const targets: AgentTarget[] = [
    ...Array.from({ length: 8 }, (_, i) => ({ node: `hung-${i}`, url: `${base}/hung-${i}` })),
    ...Array.from({ length: 4 }, (_, i) => ({ node: `n-${i}`, url: `${base}/n-${i}` })),
  ];
  // Room for one answer at a time, and twelve calls at once: by count, eight hung calls would hold it.
  const budget = gatherBudget({ perAnswer: 1024 * KiB, total: 1024 * KiB });
  const obs = await fetchAgents(targets, {
    // A hang is certain to end as a timeout; the answers come well inside it on a loaded machine.
    timeoutMs: 20_000,
    concurrency: 12,
    maxBytes: 1024 * KiB,
    budget,
  });
  t.same(
    obs.map((o) => [o.node, o.outcome]),
    targets.map((x) => [x.node, x.node?.startsWith("hung") ? "timeout" : "garbage"]),
    "every node named: the hung ones timed out, the answers were read (a JSON string is not a report)",
  );
  t.ok(budget.peakReserved >= BODY, "answers were counted");
  t.ok(budget.peakReserved <= budget.total, `peak ${budget.peakReserved} within ${budget.total}`);
  t.equal(budget.peakReserved % BODY, 0, "reservations are whole declared lengths, none for the hung calls");
  t.equal(budget.reserved, 0, "everything released");
});
