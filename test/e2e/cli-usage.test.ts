// Issue #13 (9) through the built CLIs: usage errors exit 2 with one clear line (not "internal error"
// and a stack), and in static mode --fail-on unanswered passes when every agent answered — the API
// the user chose not to ask is not an unanswered read. Agents are loopback stand-ins serving reports
// the agent's own builder made.
import t from "tap";
import { AGENT_CLI } from "../helpers/standin.js";
import { freePort } from "../helpers/prometheus.js";
import { blackHoleReport, collector, run, startAgent } from "./collector-fleet.js";
import { emptyFacts, noKernelState } from "../helpers/facts.js";

const facts = emptyFacts({
  ...noKernelState,
  kernel: { release: "6.8.0-1015-aws", major: 6, minor: 8, patch: 0 },
  proxyMode: { mode: "nftables" },
});

t.test("static --fail-on unanswered: 0 when every agent answered, 1 when one did not", async (t) => {
  const port = await freePort();
  const stopA = await startAgent("127.0.0.1", port, { report: blackHoleReport("node-a", facts) });
  t.teardown(stopA);
  const args = ["report", "--source", "static", "--output", "json", "--fail-on", "unanswered"];
  const ok = await collector([...args, "--agents", `http://127.0.0.1:${port}`]);
  t.equal(ok.code, 0, ok.stderr);
  t.match(JSON.parse(ok.stdout).cluster.gaps, [{ what: "Kubernetes API", reason: /not asked/ }]);
  const deadPort = await freePort();
  const bad = await collector([
    ...args,
    "--timeout-ms",
    "5000",
    "--agents",
    `http://127.0.0.1:${port}`,
    `http://127.0.0.1:${deadPort}`,
  ]);
  t.equal(bad.code, 1, bad.stderr);
  t.match(bad.stderr, /--fail-on unanswered: 1 reached it \(http:\/\/127\.0\.0\.1:\d+: unreachable\)/);
});

t.test("usage errors: exit 2, one line naming the flag, no stack", async (t) => {
  const cases: [string[], RegExp][] = [
    [
      [AGENT_CLI, "serve", "--listen", "256.1.1.1", "--port", "0"],
      /^proxyscope-agent: invalid --listen: must be an IP address or a host name \(see --help\)\n$/,
    ],
    [
      [AGENT_CLI, "scan", "--call-timeout-ms", "9999999999"],
      /^proxyscope-agent: invalid --call-timeout-ms: must be from 1 to 2147483647 \(ms\)/,
    ],
    [[AGENT_CLI, "serve", "--port", "0x50"], /^proxyscope-agent: invalid --port: must be decimal digits/],
    [[AGENT_CLI, "scan", "extra"], /^proxyscope-agent: Unexpected argument 'extra'/],
  ];
  for (const [argv, msg] of cases) {
    const r = await run(process.execPath, argv);
    t.equal(r.code, 2, argv.slice(1).join(" "));
    t.match(r.stderr, msg);
    t.notMatch(r.stderr, /internal error|\n\s+at /);
  }
  for (const [argv, msg] of [
    [["serve", "--listen", "256.1.1.1", "--port", "0"], /^proxyscope: invalid --listen: /],
    [["report", "--interval-s", "3000000"], /^proxyscope: invalid --interval-s: .*2147483 \(s\)/],
    [["report", "--source", "static", "stray"], /^proxyscope: unexpected argument\(s\) "stray"/],
  ] as [string[], RegExp][]) {
    const r = await collector(argv);
    t.equal(r.code, 2, argv.join(" "));
    t.match(r.stderr, msg);
    t.notMatch(r.stderr, /internal error|\n\s+at /);
  }
});
