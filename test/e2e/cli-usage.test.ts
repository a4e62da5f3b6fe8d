// Issue #13 (9) through the built CLIs: usage errors exit 2 with one clear line (not "internal error"
// and a stack), and in static mode --fail-on unanswered passes when every agent answered — the API
// the user chose not to ask is not an unanswered read. Agents are loopback stand-ins serving reports
// the agent's own builder made.
import t from "tap";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { REPO_ROOT } from "../helpers/uml.js";
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
    [["serve", "--interval-s", "3000000"], /^proxyscope: invalid --interval-s: .*2147483 \(s\)/],
    // Each command takes its own flags (#16): another command's flag is named as such.
    [["report", "--interval-s", "300"], /^proxyscope: Unknown option '--interval-s' \(a flag of serve\)/],
    [["report", "--source", "static", "stray"], /^proxyscope: unexpected argument\(s\) "stray"/],
  ] as [string[], RegExp][]) {
    const r = await collector(argv);
    t.equal(r.code, 2, argv.join(" "));
    t.match(r.stderr, msg);
    t.notMatch(r.stderr, /internal error|\n\s+at /);
  }
});

t.test(
  "the collector runs as a kubectl plugin: an executable named kubectl-proxyscope on PATH",
  async (t) => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as {
      bin: Record<string, string>;
    };
    t.equal(
      pkg.bin["kubectl-proxyscope"],
      pkg.bin.proxyscope,
      "npm installs the collector under the plugin's name",
    );
    // kubectl finds plugins as kubectl-<name> on PATH and execs them with the remaining arguments.
    const dir = mkdtempSync(join(tmpdir(), "proxyscope-plugin-"));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    symlinkSync(join(REPO_ROOT, pkg.bin["kubectl-proxyscope"]!), join(dir, "kubectl-proxyscope"));
    const r = spawnSync("kubectl-proxyscope", ["version"], {
      encoding: "utf8",
      timeout: 120_000,
      env: { PATH: `${dir}:${dirname(process.execPath)}` },
    });
    t.equal(r.status, 0, r.stderr);
    t.match(r.stdout, /^proxyscope \d+\.\d+\.\d+/);
    const help = spawnSync("kubectl-proxyscope", ["--help"], {
      encoding: "utf8",
      timeout: 120_000,
      env: { PATH: `${dir}:${dirname(process.execPath)}` },
    });
    t.match(`${help.stdout}${help.stderr}`, /kubectl proxyscope <command>/);
  },
);
