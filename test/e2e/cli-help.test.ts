// Tried as a new user would, through the built CLIs: help per command (not the global help,
// not the JSON Schema), --version on both, errors that name the flag as typed and suggest the one meant,
// every flag from an environment variable, the output formats, and kubectl's habits on the collector
// (--kubeconfig, --context, KUBECONFIG, -n) with an error that says where it looked for a kubeconfig.
import { REPORT_FORMATS } from "../../collector/config.js";
import t from "tap";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { VERSION } from "../../common/version.js";
import { AGENT_CLI } from "../helpers/standin.js";
import { freePort } from "../helpers/prometheus.js";
import {
  blackHoleReport,
  collector,
  COLLECTOR_CLI,
  run,
  startAgent,
  writeKubeconfig,
} from "./collector-fleet.js";
import { emptyFacts, noKernelState } from "../helpers/facts.js";

const agent = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  run(process.execPath, [AGENT_CLI, ...args], { NO_COLOR: "1", ...env });

t.test("help per command, and --version on both programs", async (t) => {
  const scan = await agent(["scan", "--help"]);
  t.equal(scan.code, 0);
  t.match(scan.stdout, /^Usage: proxyscope-agent scan /, "scan's own help");
  t.match(scan.stdout, /--fail-on/);
  t.notMatch(scan.stdout, /--scan-interval-s/, "not serve's flags");
  const schema = await agent(["schema", "--help"]);
  t.equal(schema.code, 0);
  t.match(schema.stdout, /^Usage: proxyscope-agent schema/);
  t.notMatch(schema.stdout, /"\$schema"/, "help, not the schema");
  const report = await collector(["report", "--help"]);
  t.match(report.stdout, /^Usage: proxyscope report /);
  t.match(report.stdout, new RegExp(`-o, --output <format>\\s+${REPORT_FORMATS.join("\\|")}\\s`));
  t.match(report.stdout, /--kubeconfig <path>/);
  t.match(report.stdout, /--context <name>/);
  t.match(report.stdout, /-n, --namespace <ns>/);
  t.match(report.stdout, /\[PROXYSCOPE_TARGET_VERSION\]/, "each flag names its variable");
  for (const [who, r] of [
    ["proxyscope-agent", await agent(["--version"])],
    ["proxyscope", await collector(["--version"])],
  ] as const) {
    t.equal(r.code, 0);
    t.equal(r.stdout, `${who} ${VERSION}\n`);
  }
});

t.test("errors name the flag as typed, say what is wrong, and suggest the one meant", async (t) => {
  const cases: [Promise<Awaited<ReturnType<typeof run>>>, RegExp][] = [
    [agent(["serve", "--port", "abc"]), /^proxyscope-agent: invalid --port: must be decimal digits/],
    [
      agent(["serve", "--scan-interval-s", "-1"]),
      /^proxyscope-agent: invalid --scan-interval-s: must be above 0/,
    ],
    [agent(["serve"], { PROXYSCOPE_PORT: "abc" }), /^proxyscope-agent: invalid PROXYSCOPE_PORT: /],
    [agent(["scan", "--jsno"]), /^proxyscope-agent: Unknown option '--jsno' \(did you mean --json\?\)/],
    [agent(["sacn"]), /^proxyscope-agent: Unknown command 'sacn' \(did you mean scan\?\)/],
    [agent(["scan", "--port", "1"]), /^proxyscope-agent: Unknown option '--port' \(a flag of serve\)/],
    [
      collector(["report", "--outptu", "json"]),
      /^proxyscope: Unknown option '--outptu' \(did you mean --output\?\)/,
    ],
    [
      collector(["report", "-o", "pdf"]),
      new RegExp(`^proxyscope: invalid -?-o(utput)?: must be one of ${REPORT_FORMATS.join("\\|")} `),
    ],
    [collector(["verify", "-o", "html", "--node", "x"]), /must be one of text\|json\|yaml/],
  ];
  for (const [p, msg] of cases) {
    const r = await p;
    t.equal(r.code, 2, r.stderr);
    t.match(r.stderr, msg);
    t.equal(r.stderr.split("\n").length, 2, "one line");
    t.notMatch(r.stderr, /To specify a positional argument|argument is ambiguous|internal error/);
  }
});

t.test("kubectl's habits: with no kubeconfig the error says where it looked", async (t) => {
  const home = mkdtempSync(join(tmpdir(), "proxyscope-home-"));
  t.teardown(() => rmSync(home, { recursive: true, force: true }));
  const r = await run(process.execPath, [COLLECTOR_CLI, "report"], {
    HOME: home,
    KUBECONFIG: "",
    KUBERNETES_SERVICE_HOST: "",
    PROXYSCOPE_KUBECONFIG: "",
  });
  t.equal(r.code, 5);
  t.match(r.stderr, /no kubeconfig found; looked at --kubeconfig \(not given\), \$KUBECONFIG \(not set\)/);
  t.match(r.stderr, new RegExp(`${home}/\\.kube/config \\(no such file\\)`));
  t.notMatch(r.stderr, /HTTP protocol is not allowed/);

  // $KUBECONFIG is honoured, and --context picks a context by name, or says which there are.
  const closed = await freePort();
  const kc = writeKubeconfig(home, `http://127.0.0.1:${closed}`, "x");
  const viaEnv = await collector(["report"], { KUBECONFIG: kc });
  t.equal(viaEnv.code, 5);
  t.match(viaEnv.stderr, new RegExp(`cannot list nodes from http://127\\.0\\.0\\.1:${closed}`));
  const ctx = await collector(["report", "--kubeconfig", kc, "--context", "prod"]);
  t.equal(ctx.code, 5);
  t.match(ctx.stderr, /no context "prod" in the kubeconfig \(it has: stand-in\)/);
  const plain = join(home, "plain-http");
  writeFileSync(
    plain,
    `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: http://127.0.0.1:${closed}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {token: x}\n`,
  );
  const http = await collector(["report", "--kubeconfig", plain]);
  t.equal(http.code, 5);
  t.match(http.stderr, /cluster "c" is plain http .*insecure-skip-tls-verify/);
});

t.test("every flag from the environment; -o yaml and csv", async (t) => {
  const port = await freePort();
  const facts = emptyFacts({
    ...noKernelState,
    kernel: { release: "6.8.0-1015-aws", major: 6, minor: 8, patch: 0 },
    proxyMode: { mode: "nftables" },
  });
  const stop = await startAgent("127.0.0.1", port, { report: blackHoleReport("=cmd|' /C calc'!A0", facts) });
  t.teardown(stop);
  const env = {
    PROXYSCOPE_SOURCE: "static",
    PROXYSCOPE_AGENTS: `http://127.0.0.1:${port}`,
    PROXYSCOPE_TIMEOUT_MS: "60000",
  };
  const yaml = await collector(["report", "-o", "yaml"], env);
  t.equal(yaml.code, 0, yaml.stderr);
  const doc = parseYaml(yaml.stdout) as { nodes: { node: string; outcome: string }[] };
  t.same(
    doc.nodes.map((n) => n.outcome),
    ["ok"],
  );
  const csv = await collector(["report"], { ...env, PROXYSCOPE_OUTPUT: "csv" });
  t.equal(csv.code, 0, csv.stderr);
  const [head, row, end] = csv.stdout.split("\r\n");
  t.match(head, /^pool,node,phase,verdict,outcome,/);
  t.match(row, /^[^,]*,'=cmd\|' \/C calc'!A0,/, "a formula-like node name is shown, not evaluated");
  t.equal(end, "");
  const flagWins = await collector(["report", "-o", "json"], { ...env, PROXYSCOPE_OUTPUT: "csv" });
  t.doesNotThrow(() => JSON.parse(flagWins.stdout), "the flag wins over the variable");
});
