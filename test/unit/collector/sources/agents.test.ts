import t from "tap";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fetchAgent, fetchAgents } from "../../../../collector/sources/agents.js";

// A hung agent is asked once: a call that used its whole deadline will not do better on a retry, and
// retrying it doubled the wait on every hung agent of a large gather. A 5xx is asked twice.
async function server(answer: (count: number) => number | null) {
  let count = 0;
  const s = createServer((_req, res) => {
    const status = answer(++count);
    if (status !== null) res.writeHead(status).end("{}");
  });
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  t.teardown(() => {
    s.closeAllConnections();
    s.close();
  });
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, calls: () => count };
}

t.test("a hung agent: one call, outcome timeout, no retry claimed", async (t) => {
  const hung = await server(() => null);
  // Long enough for the call to reach the agent on a loaded machine (300 ms was not, at load 43): a hang
  // needs no short deadline to be told apart.
  const obs = await fetchAgent({ node: "n1", url: hung.url }, { timeoutMs: 10_000, maxBytes: 1024 * 1024 });
  t.equal(obs.outcome, "timeout");
  t.equal(hung.calls(), 1);
  t.notMatch(obs.reason, /retry/);
});

t.test("an agent answering 503 is asked again", async (t) => {
  const busy = await server(() => 503);
  const obs = await fetchAgent({ node: "n2", url: busy.url }, { timeoutMs: 60_000, maxBytes: 1024 * 1024 });
  t.equal(obs.outcome, "http-status");
  t.equal(busy.calls(), 2);
});

t.test(
  "one deadline for the whole gather: a call is cut to it, the targets after it are not asked",
  async (t) => {
    // The deadline's clock is the test's: it passes the moment the hung agent is reached, so the hung
    // call must end by its cut timeout (5 s, not 10 min) and the two agents after it must never be asked.
    let clock = 0;
    let hungCalls = 0;
    const s = createServer(() => {
      hungCalls++;
      clock += 60_000;
    });
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
    t.teardown(() => {
      s.closeAllConnections();
      s.close();
    });
    const hung = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
    const ok1 = await server(() => 200);
    const ok2 = await server(() => 200);
    const obs = await fetchAgents(
      [
        { node: "hung", url: hung },
        { node: "later-1", url: ok1.url },
        { node: "later-2", url: ok2.url },
      ],
      { timeoutMs: 600_000, maxBytes: 1024 * 1024, concurrency: 1, deadlineMs: 5_000, clockMs: () => clock },
    );
    t.same(
      obs.map((o) => `${o.node} ${o.outcome}`),
      ["hung timeout", "later-1 timeout", "later-2 timeout"],
    );
    t.match(obs[0]!.reason, /did not answer within 5000 ms/);
    t.match(obs[1]!.reason, /was not asked: the gather's deadline of 5000 ms had passed/);
    t.equal(hungCalls, 1, "a timed-out call is not retried");
    t.equal(ok1.calls() + ok2.calls(), 0, "nothing is asked past the deadline");
  },
);

t.test("a refused agent's retry is not made once the gather's deadline has passed", async (t) => {
  let clock = 0;
  const busy = await server(() => {
    clock += 60_000;
    return 503;
  });
  const [o] = await fetchAgents([{ node: "n", url: busy.url }], {
    timeoutMs: 60_000,
    maxBytes: 1024 * 1024,
    concurrency: 1,
    deadlineMs: 5_000,
    clockMs: () => clock,
  });
  t.equal(o!.outcome, "http-status");
  t.equal(busy.calls(), 1);
});
