import t from "tap";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fetchAgent } from "../../../../collector/sources/agents.js";

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
