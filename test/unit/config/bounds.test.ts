// Every duration flag is bounded below Node's timer limit, ports are decimal digits,
// --listen is an address or a host name, and stray positionals are refused — each error names what
// the user typed. Before the fix each of these was accepted and misbehaved later.
import t from "tap";
import { ConfigError, loadConfig as agentConfig, MAX_TIMER_MS, MAX_TIMER_S } from "../../../agent/config.js";
import { loadConfig as collectorConfig } from "../../../collector/config.js";

const agentRefuses = (argv: string[], msg: RegExp, env: NodeJS.ProcessEnv = {}) =>
  t.throws(() => agentConfig(argv, env), { constructor: ConfigError, message: msg }, argv.join(" "));
const collectorRefuses = (argv: string[], msg: RegExp) =>
  t.throws(() => collectorConfig(argv), { message: msg }, argv.join(" "));

t.equal(MAX_TIMER_MS, 2147483647);
t.equal(MAX_TIMER_S, 2147483);

t.test("agent: durations above a timer's range are refused, naming the flag and the range", async () => {
  agentRefuses(
    ["--call-timeout-ms", "9999999999"],
    /^invalid --call-timeout-ms: must be from 1 to 2147483647 \(ms\)$/,
  );
  agentRefuses(["--probe-timeout-ms", "2147483648"], /^invalid --probe-timeout-ms: .*2147483647/);
  agentRefuses(["--scan-interval-s", "3000000"], /^invalid --scan-interval-s: .*2147483 \(s\)$/);
  agentRefuses(["--sync-window-s", "601"], /^invalid --sync-window-s: must be from 0 to 600/);
  agentRefuses([], /^invalid PROXYSCOPE_CALL_TIMEOUT_MS: /, { PROXYSCOPE_CALL_TIMEOUT_MS: "9999999999" });
  agentRefuses(["--call-timeout-ms", "1e3"], /invalid --call-timeout-ms: must be decimal digits/);
  const ok = agentConfig(
    [
      "--call-timeout-ms",
      String(MAX_TIMER_MS),
      "--scan-interval-s",
      String(MAX_TIMER_S),
      "--sync-window-s",
      "0",
    ],
    {},
  );
  t.equal(ok.callTimeoutMs, MAX_TIMER_MS);
  t.equal(ok.scanIntervalS, MAX_TIMER_S);
  t.equal(ok.syncWindowS, 0);
  // Seconds are whole, like every number flag; sub-second scans (the benchmarks') are given in ms.
  for (const f of ["--scan-interval-s", "--full-read-interval-s", "--sync-window-s", "--parity-max-age-s"])
    for (const v of ["0.5", "1e3", "90.0"])
      agentRefuses([f, v], new RegExp(`^invalid ${f}: must be decimal digits$`));
  t.equal(agentConfig(["--scan-interval-ms", "500"], {}).scanIntervalS, 0.5);
  agentRefuses(["--scan-interval-ms", "500", "--scan-interval-s", "1"], /give one of them/);
});

t.test("agent: --port is decimal digits, --listen an address or host name", async () => {
  for (const p of ["0x50", "1e2", " 80", "80.0", "-1", "65536"])
    agentRefuses([`--port=${p}`], /^invalid --port: /);
  t.equal(agentConfig(["--port", "80"], {}).listenPort, 80);
  t.equal(agentConfig(["--port", "0"], {}).listenPort, 0);
  agentRefuses(["--listen", "256.1.1.1"], /^invalid --listen: must be an IP address or a host name$/);
  agentRefuses([], /^invalid PROXYSCOPE_LISTEN: /, { PROXYSCOPE_LISTEN: "256.1.1.1" });
  for (const h of ["127.0.0.1", "::1", "localhost", "node-1.example.org"])
    t.equal(agentConfig(["--listen", h], {}).listenHost, h);
  agentRefuses(["scan-extra"], /Unexpected argument 'scan-extra'/);
});

t.test("collector: the same bounds, and positionals only as --agents URLs of --source static", async () => {
  collectorRefuses(
    ["--timeout-ms", "9999999999"],
    /^invalid --timeout-ms: must be from 1 to 2147483647 \(ms\)$/,
  );
  collectorRefuses(["--interval-s", "3000000"], /^invalid --interval-s: .*2147483 \(s\)$/);
  for (const [f, v] of [
    ["--interval-s", "1.5"],
    ["--concurrency", "2.0"],
    ["--timeout-ms", "1e3"],
  ])
    collectorRefuses([f!, v!], new RegExp(`^invalid ${f}: must be decimal digits$`));
  collectorRefuses(["--agent-port", "0x50"], /^invalid --agent-port: must be decimal digits$/);
  collectorRefuses(["--agent-port", "0"], /^invalid --agent-port: must be from 1 to 65535$/);
  collectorRefuses(["--port", "0x50"], /^invalid --port: /);
  collectorRefuses(["--concurrency", "0x10"], /^invalid --concurrency: /);
  collectorRefuses(["--listen", "256.1.1.1"], /^invalid --listen: must be an IP address or a host name$/);
  collectorRefuses(["--source", "static", "stray"], /^unexpected argument\(s\) "stray"$/);
  collectorRefuses(
    ["--agents", "http://a:1", "http://b:1"],
    /unexpected argument\(s\) "http:\/\/b:1" \(extra --agents URLs need --source static\)/,
  );
  const c = collectorConfig(["--source", "static", "--agents", "http://a:1", "http://b:1", "--port", "80"]);
  t.same(c.agents, ["http://a:1", "http://b:1"]);
  t.equal(c.port, 80);
  t.equal(collectorConfig(["--timeout-ms", String(MAX_TIMER_MS)]).timeoutMs, MAX_TIMER_MS);
});

t.test("an unknown flag is named in a bounded line, however long the user's text", async (t) => {
  const huge = `--o${" ".repeat(5000)}utput`;
  for (const [who, load] of [
    ["agent", () => agentConfig([huge], {})],
    ["collector", () => collectorConfig([huge, "json"])],
  ] as const) {
    try {
      load();
      t.fail(`${who}: accepted`);
    } catch (e) {
      const m = (e as Error).message;
      t.ok(m.length <= 600, `${who}: ${m.length} characters`);
      t.match(m, /Unknown option '--o {10}/, `${who}: names the option`);
      t.notMatch(m, /\n/);
    }
  }
});
