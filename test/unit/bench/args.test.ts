// The benchmark entry points' flags (bench/lib/args.ts): --help is the usage and 0, a bad flag is one
// line naming it, the usage and 2, never a stack trace, and nothing is measured either way. The built
// scripts run as child processes; none is given flags that would start a measurement, so a
// regression fails here without building namespaces or booting anything.
import { execFile } from "node:child_process";
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import t from "tap";
import { benchArgs, count, required, seconds } from "../../../bench/lib/args.js";
import { EXIT } from "../../../common/exit-codes.js";
import { staleBuild } from "../../helpers/built.js";
import { REPO_ROOT } from "../../helpers/uml.js";

const ENTRY_POINTS = [
  "bench/run.ts",
  "bench/growth.ts",
  "bench/nft-calls.ts",
  "bench/soak.ts",
  "bench/fleet/prometheus.ts",
  "bench/node/scan-steady.ts",
  "bench/node/node-bench.ts",
  "bench/node/scan-once.ts",
  "bench/node/rss-serve.ts",
  "bench/node/serve-block.ts",
  "bench/node/serve-cost.ts",
  "bench/replay/run.ts",
  "bench/replay/measure.ts",
  "bench/replay/record.ts",
];
const built = (ts: string) => ts.replace(/\.ts$/, ".js");

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A program from the repository root, as the usage texts name them; the timeout is only a backstop. */
function run(file: string, args: string[]): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      file.endsWith(".sh") ? "bash" : process.execPath,
      [file, ...args],
      // Without tap's NODE_OPTIONS: its loaders are not the scripts'.
      { cwd: REPO_ROOT, timeout: 120_000, env: { ...process.env, NODE_OPTIONS: "" } },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

const NO_STACK = /^\s+at /m;

t.test("good flags parse, typed as parseArgs types them", async (t) => {
  const { values, positionals } = benchArgs("Usage: x", {
    args: ["--n", "12", "--keep", "--s=0.5", "--", "--help"],
    allowPositionals: true,
    options: {
      n: { type: "string", default: "1" },
      s: { type: "string" },
      keep: { type: "boolean", default: false },
      env: { type: "string", multiple: true, default: [] },
    },
  });
  const n: string = values.n;
  const s: string | undefined = values.s;
  const env: string[] = values.env;
  t.same({ n, s, keep: values.keep, env }, { n: "12", s: "0.5", keep: true, env: [] });
  t.same(positionals, ["--help"], "after --, --help is an argument, not a request for help");
  t.equal(count(n, "--n"), 12);
  t.equal(count("0", "--n"), 0);
  t.equal(count("5", "--port", 1), 5);
  t.equal(seconds("0.5", "--s"), 0.5);
  t.equal(seconds("120", "--s"), 120);
  t.equal(required("out.json", "--out"), "out.json");
});

t.test("the helper in a script of its own: help, unknown flags, bad numbers, a missing flag", async (t) => {
  t.equal(staleBuild(["bench/lib/args.ts"]), null, "dist is current");
  const dir = t.testdir({
    "probe.mjs": `
import { benchArgs, count, required, seconds } from ${JSON.stringify(pathToFileURL(join(REPO_ROOT, "dist/bench/lib/args.js")).href)};
const { values } = benchArgs("Usage: probe [--n N] [--s S] --out FILE", {
  options: { n: { type: "string", default: "1" }, s: { type: "string", default: "0" }, out: { type: "string" } },
});
const n = count(values.n, "--n");
const s = seconds(values.s, "--s");
const out = required(values.out, "--out");
process.stdout.write(JSON.stringify({ n, s, out }));
`,
  });
  const probe = join(dir, "probe.mjs");

  const good = await run(probe, ["--n", "12", "--s", "0.5", "--out", "f"]);
  t.equal(good.code, EXIT.ok, good.stderr);
  t.same(JSON.parse(good.stdout), { n: 12, s: 0.5, out: "f" });

  for (const help of [["--help"], ["-h"], ["--n", "abc", "--help"]]) {
    const r = await run(probe, help);
    t.equal(r.code, EXIT.ok, `${help.join(" ")}: ${r.stderr}`);
    t.equal(r.stdout, "Usage: probe [--n N] [--s S] --out FILE\n", "the usage, on stdout");
    t.equal(r.stderr, "");
  }

  const bad: [string[], RegExp][] = [
    [["--bogus", "--out", "f"], /: Unknown option '--bogus'\n\nUsage: probe/],
    [["--n"], /: Option '--n <value>' argument missing\n\nUsage: probe/],
    [["--out", "f", "stray"], /: Unexpected argument 'stray'/],
    [["--n", "abc", "--out", "f"], /: --n wants a whole number \(0 or more\), not 'abc'\n$/],
    [["--n=-3", "--out", "f"], /: --n wants a whole number \(0 or more\), not '-3'\n$/],
    [["--n", "1.5", "--out", "f"], /: --n wants a whole number/],
    [["--n", "", "--out", "f"], /: --n wants a whole number/],
    [["--s", "soon", "--out", "f"], /: --s wants seconds \(0 or more, e\.g\. 0\.5\), not 'soon'\n$/],
    [[], /: --out is required \(--help for usage\)\n$/],
  ];
  for (const [args, message] of bad) {
    const r = await run(probe, args);
    t.equal(r.code, EXIT.usage, `${args.join(" ")} is a usage error`);
    t.match(r.stderr, message, args.join(" "));
    t.notMatch(r.stderr, NO_STACK, "no stack trace");
    t.equal(r.stdout, "", "nothing on stdout");
  }
});

t.test(
  "every bench entry point: --help is its usage, an unknown flag exits 2, before any work",
  async (t) => {
    t.equal(staleBuild(["bench/lib/args.ts", ...ENTRY_POINTS]), null, "dist is current");
    for (const ts of ENTRY_POINTS) {
      const js = `dist/${built(ts)}`;
      const help = await run(js, ["--help"]);
      t.equal(help.code, EXIT.ok, `${js} --help: ${help.stderr}`);
      t.match(help.stdout, /^Usage: /, `${js}: the usage on stdout`);
      t.equal(help.stderr, "", `${js}: nothing logged, so nothing started`);

      const bogus = await run(js, ["--bogus"]);
      t.equal(bogus.code, EXIT.usage, `${js} --bogus`);
      t.match(bogus.stderr, `${js}: Unknown option '--bogus'`, `${js}: the flag named`);
      t.match(bogus.stderr, /\nUsage: /, `${js}: the usage after it`);
      t.notMatch(bogus.stderr, NO_STACK, `${js}: no stack trace`);
    }
    // Each usage names its own script (scripts that npm runs name the npm script first).
    const bench = await run("dist/bench/run.js", ["-h"]);
    t.match(bench.stdout, /npm run bench -- \[flags\]/);
    t.match(bench.stdout, /node dist\/bench\/run\.js/);
  },
);

t.test("bad values on entry points: named, exit 2, nothing measured", async (t) => {
  t.equal(staleBuild(["bench/lib/args.ts", ...ENTRY_POINTS]), null, "dist is current");
  // Chosen so that a regression fails fast too: each would otherwise die on the missing report file
  // or the unlabelled --collector, never start a benchmark.
  const cases: [string, string[], RegExp][] = [
    ["dist/bench/node/serve-cost.js", ["--report", "/nonexistent/report.json", "--reps", "abc"], /--reps/],
    ["dist/bench/node/serve-cost.js", [], /--report is required/],
    ["dist/bench/fleet/prometheus.js", ["--step-s", "0", "--collector", "/nonexistent"], /--step-s/],
    ["dist/bench/fleet/prometheus.js", ["--collector", "/nonexistent"], /--collector wants LABEL=/],
  ];
  for (const [js, args, message] of cases) {
    const r = await run(js, args);
    t.equal(r.code, EXIT.usage, `${js} ${args.join(" ")}: ${r.stderr}`);
    t.match(r.stderr, message);
    t.notMatch(r.stderr, NO_STACK, "no stack trace");
  }
});

t.test("scripts/bench.sh --help: its header, before installing or building anything", async (t) => {
  // A copy alone in an empty tree: were --help not handled first, the script would find no
  // setup-debian.sh to run and fail, installing nothing.
  const dir = t.testdir({ scripts: {} });
  copyFileSync(join(REPO_ROOT, "scripts/bench.sh"), join(dir, "scripts/bench.sh"));
  for (const flag of ["--help", "-h"]) {
    const r = await run(join(dir, "scripts/bench.sh"), ["--quick", flag]);
    t.equal(r.code, 0, `${flag}: ${r.stderr}`);
    t.match(r.stdout, /^The benchmarks, one command/);
    t.match(r.stdout, /scripts\/bench\.sh --quick /);
    t.notMatch(r.stdout, /^#|set -euo/m, "the comment's text, not the script");
    t.equal(r.stderr, "");
  }
});
