// --agents-file reads regular files only, capped (a FIFO hung the collector, /dev/zero
// ran it out of memory); an agent's year-old report is a named "stale" failure for that node, not its
// present state; and --fail-on unanswered does not count the API the user chose not to ask.
import t from "tap";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildReport } from "../../../agent/assemble/report.js";
import { fleetDigestOf, type NodeReport } from "../../../agent/contract.js";
import { reasonsToFail } from "../../../collector/report/fail-on.js";
import { rollup } from "../../../collector/plan/rollup.js";
import { fetchAgent, STALE_AFTER_S } from "../../../collector/sources/agents.js";
import { MAX_AGENTS_FILE_BYTES, readTargetsFile } from "../../../collector/sources/static.js";

const dir = mkdtempSync(join(tmpdir(), "proxyscope-agents-file-"));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test("--agents-file: a FIFO and /dev/zero are refused, a file over the cap too", async (t) => {
  const fifo = join(dir, "fifo");
  execFileSync("mkfifo", [fifo]);
  const f = await readTargetsFile(fifo);
  t.same(f.targets, []);
  t.match(f.errors, [/^cannot read --agents-file .*fifo: .*not a regular file/]);
  const z = await readTargetsFile("/dev/zero");
  t.match(z.errors, [/^cannot read --agents-file \/dev\/zero: .*not a regular file/]);
  const big = join(dir, "big");
  writeFileSync(big, "http://a:1\n".repeat(Math.ceil((MAX_AGENTS_FILE_BYTES + 1) / 11)));
  t.match((await readTargetsFile(big)).errors, [/larger than 4194304 bytes/]);
  const good = join(dir, "good");
  writeFileSync(good, "n1 http://127.0.0.1:9977\n");
  t.same(await readTargetsFile(good), {
    targets: [{ node: "n1", url: "http://127.0.0.1:9977" }],
    errors: [],
  });
});

function report(node: string, at: Date): NodeReport {
  return buildReport(
    [{ name: "kernel" as const, outcome: { ok: true as const, facts: null }, durationMs: 1 }],
    {
      node,
      agentVersion: "0.1.0",
      startedAt: at,
      finishedAt: at,
    },
  );
}

// Both routes: a current agent's /report/fleet, and an older agent's /report (it answers 404 for the other).
for (const older of [false, true])
  t.test(
    `${older ? "an older agent (no /report/fleet)" : "an agent"} serving a year-old report: outcome stale, named, the node kept`,
    async (t) => {
      const now = Date.parse("2026-12-01T10:00:00Z");
      const reports = {
        old: report("n-old", new Date(now - 365 * 86400_000)),
        fresh: report("n-fresh", new Date(now - 60_000)),
      };
      const bodies: Record<string, string> = {};
      for (const [k, r] of Object.entries(reports))
        bodies[`/${k}/${older ? "report" : "report/fleet"}`] = JSON.stringify(older ? r : fleetDigestOf(r));
      const s = createServer((req, res) => {
        const body = bodies[req.url ?? ""];
        res.writeHead(body === undefined ? 404 : 200).end(body ?? "{}");
      });
      await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
      t.teardown(() => {
        s.closeAllConnections();
        s.close();
      });
      const base = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
      const opts = { timeoutMs: 5000, concurrency: 1, maxBytes: 1024 * 1024, now: () => now };
      const old = await fetchAgent({ node: null, url: `${base}/old` }, opts);
      t.equal(old.node, "n-old");
      t.equal(old.outcome, "stale");
      t.match(old.endpoint, older ? /\/old\/report$/ : /\/old\/report\/fleet$/, "the route that answered");
      t.match(old.reason, /scanned at 2025-12-01T10:00:00\.000Z, 31536000 s ago \(stale after 900 s\)/);
      t.equal(STALE_AFTER_S, 900);
      const fresh = await fetchAgent({ node: null, url: `${base}/fresh` }, opts);
      t.equal(fresh.outcome, "ok");
      const fleet = rollup({
        source: "static",
        collectorVersion: "0",
        generatedAt: new Date(now),
        cluster: null,
        observations: [old, fresh],
        missingOutcome: "no-agent",
      });
      t.same(fleet.nodes.map((n) => [n.node, n.outcome]).sort(), [
        ["n-fresh", "ok"],
        ["n-old", "stale"],
      ]);
      t.same(reasonsToFail(fleet, "unanswered"), ["n-old: stale"]);
      // Every node answered: the API the user chose not to ask is shown, but it is not a failed read.
      const allFresh = rollup({
        source: "static",
        collectorVersion: "0",
        generatedAt: new Date(now),
        cluster: null,
        observations: [fresh],
        missingOutcome: "no-agent",
      });
      t.match(allFresh.cluster.gaps, [{ what: "Kubernetes API", reason: /not asked/ }]);
      t.same(reasonsToFail(allFresh, "unanswered"), []);
    },
  );
