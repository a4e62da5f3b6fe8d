import t, { type Test } from "tap";
import { spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ToolRunner } from "../../../agent/io/run.js";
import { kubeProxyModeProbe } from "../../../agent/probes/kube-proxy-mode.js";
import { kubeProxyConfigzProbe } from "../../../agent/probes/kube-proxy-configz.js";
import { kubeProxyMetricsProbe } from "../../../agent/probes/kube-proxy-metrics.js";
import { kubeProxyHealthProbe } from "../../../agent/probes/kube-proxy-health.js";
import type { Probe, ProbeContext, ProbeOutcome } from "../../../agent/probes/types.js";
import type { Fault, Scenario } from "../../standins/kube-proxy.js";
import { spawnOwned } from "../../helpers/children.js";

// The four probes against the real stand-in process (test/standins/kube-proxy.ts, compiled, run with
// plain node as it is in namespaces and UML), on loopback ports chosen by the kernel.

const root = fileURLToPath(new URL("../../../", import.meta.url));
const source = join(root, "test/standins/kube-proxy.ts");
const compiled = join(root, "dist/test/standins/kube-proxy.js");
const scenarios = join(root, "test/fixtures/kube-proxy/scenarios");
const work = mkdtempSync(join(tmpdir(), "proxyscope-kube-proxy-standin-"));
t.teardown(() => rmSync(work, { recursive: true, force: true }));

t.before(() => {
  const stale = !existsSync(compiled) || statSync(compiled).mtimeMs < statSync(source).mtimeMs;
  // tsc emits even when other files of the project fail to type-check; only freshness matters here.
  if (stale) spawnSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", root]);
  if (!existsSync(compiled) || statSync(compiled).mtimeMs < statSync(source).mtimeMs) {
    throw new Error(`${compiled} is missing or older than its source: run npx tsc -p .`);
  }
});

interface Running {
  metricsUrl: string;
  healthUrl: string;
  child: ChildProcess;
}

let seq = 0;
async function startStandIn(sc: Scenario): Promise<Running> {
  const file = join(work, `scenario-${seq++}.json`);
  writeFileSync(file, JSON.stringify({ ...sc, metricsAddress: "127.0.0.1:0", healthAddress: "127.0.0.1:0" }));
  const child = spawnOwned(process.execPath, [compiled, file], { stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
  const line = await new Promise<string>((ok, fail) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("\n")) ok(out.split("\n")[0]!);
    });
    child.once("exit", (code) => fail(new Error(`stand-in exited ${code}: ${err}`)));
  });
  const m = /^ready (\d+) (\d+)$/.exec(line);
  if (!m) throw new Error(`unexpected first line ${JSON.stringify(line)}`);
  return { metricsUrl: `http://127.0.0.1:${m[1]}`, healthUrl: `http://127.0.0.1:${m[2]}`, child };
}

function stop(r: Running): Promise<{ code: number | null; signal: string | null }> {
  return new Promise((ok) => {
    if (r.child.exitCode !== null) return ok({ code: r.child.exitCode, signal: null });
    r.child.once("exit", (code, signal) => ok({ code, signal }));
    r.child.kill("SIGTERM");
  });
}

// Healthy answers get the agent's default deadline: 3 s can be missed on a loaded machine.
function ctx(r: Running, callTimeoutMs = 60_000): ProbeContext {
  return {
    hostRoot: "/",
    procRoot: "/proc",
    sysRoot: "/sys",
    tools: new ToolRunner(),
    callTimeoutMs,
    prior: {},
  };
}

/** The stand-in's addresses, as each kube-proxy probe takes them. */
function urls(r: Running) {
  return { metrics: { metricsUrl: r.metricsUrl }, health: { healthUrl: r.healthUrl } };
}

const probes = [
  kubeProxyModeProbe,
  kubeProxyConfigzProbe,
  kubeProxyMetricsProbe,
  kubeProxyHealthProbe,
] as const;

async function runAll(r: Running, timeoutMs?: number) {
  const c = ctx(r, timeoutMs);
  const [mode, configz, metrics, health] = await Promise.all([
    kubeProxyModeProbe.run(c, urls(r).metrics),
    kubeProxyConfigzProbe.run(c, urls(r).metrics),
    kubeProxyMetricsProbe.run(c, urls(r).metrics),
    kubeProxyHealthProbe.run(c, urls(r).health),
  ]);
  return { mode, configz, metrics, health };
}

function facts<F>(t: Test, probe: Probe<F>, o: ProbeOutcome<F>): F | null {
  if (!o.ok) {
    t.fail(`${probe.name} failed: ${o.error.kind} ${o.error.message}`);
    return null;
  }
  t.ok(probe.schema.safeParse(o.facts).success, `${probe.name} facts match the schema`);
  return o.facts;
}

const loadScenario = (name: string) =>
  JSON.parse(readFileSync(join(scenarios, `${name}.json`), "utf8")) as Scenario;

t.test("every recorded scenario: four probes succeed and read what the scenario says", async (t) => {
  const names = readdirSync(scenarios).map((f) => f.replace(/\.json$/, ""));
  t.ok(names.length >= 5);
  for (const name of names) {
    await t.test(name, async (t) => {
      const sc = loadScenario(name);
      const r = await startStandIn(sc);
      try {
        const o = await runAll(r);
        const expectedMode = sc.mode === "" ? "iptables" : sc.mode;
        t.equal(facts(t, kubeProxyModeProbe, o.mode)?.mode, expectedMode);
        t.equal(facts(t, kubeProxyConfigzProbe, o.configz)?.mode, expectedMode);
        const m = facts(t, kubeProxyMetricsProbe, o.metrics);
        t.equal(m?.gitVersion, sc.version);
        for (const [n, v] of Object.entries(sc.counters ?? {})) {
          if (typeof v === "number" && v > 0) t.equal(m?.metrics[n]?.value, v, n);
        }
        const h = facts(t, kubeProxyHealthProbe, o.health);
        const healthy = sc.healthy ?? true;
        const eligible = sc.nodeEligible ?? true;
        t.equal(h?.status, healthy && eligible ? 200 : 503, "503 is an answer, not a failure");
        t.equal(h?.shape, Number(/^v1\.(\d+)/.exec(sc.version)![1]) >= 33 ? "v1.33+" : "legacy");
        t.equal(h?.nodeEligible, eligible);
      } finally {
        t.same(await stop(r), { code: 0, signal: null }, "stand-in exits cleanly on SIGTERM");
      }
    });
  }
});

t.test("the health probe counts in the stand-in's own kubeproxy_proxy_healthz_total", async (t) => {
  const r = await startStandIn(loadScenario("nftables-draining-v1.33"));
  try {
    await kubeProxyHealthProbe.run(ctx(r), urls(r).health);
    await kubeProxyHealthProbe.run(ctx(r), urls(r).health);
    const m = await kubeProxyMetricsProbe.run(ctx(r), urls(r).metrics);
    t.ok(m.ok && m.facts.metrics.kubeproxy_proxy_healthz_total?.value === 2);
  } finally {
    await stop(r);
  }
});

const allFaults = (f: Fault): Scenario["faults"] => ({
  proxyMode: f,
  configz: f,
  metrics: f,
  healthz: f,
  livez: f,
});
const base: Scenario = { mode: "nftables", version: "v1.33.1" };

const cases: [string, Fault, string, number?][] = [
  ["refused connection", { refuse: true }, "unreachable"],
  // A hang, not a late answer: a short deadline cannot mistake it for a slow machine.
  ["never answers", { hang: true }, "timeout", 300],
  ["garbage answer", { garbage: true }, "garbage"],
  ["huge answer", { huge: 9 * 1024 * 1024 }, "output-cap"],
  ["HTTP 500", { status: 500 }, "http-status"],
];

for (const [what, fault, kind, timeoutMs] of cases) {
  t.test(`${what}: every probe fails with kind ${kind}, naming its URL`, async (t) => {
    const r = await startStandIn({ ...base, faults: allFaults(fault) });
    try {
      const o = await runAll(r, timeoutMs);
      const urls = {
        mode: `${r.metricsUrl}/proxyMode`,
        configz: `${r.metricsUrl}/configz`,
        metrics: `${r.metricsUrl}/metrics`,
        health: `${r.healthUrl}/healthz`,
      };
      for (const k of ["mode", "configz", "metrics", "health"] as const) {
        const out = o[k];
        t.equal(out.ok, false, `${k} fails`);
        if (!out.ok) {
          t.equal(out.error.kind, kind, `${k} kind`);
          t.equal(out.error.command, urls[k], `${k} names its URL`);
        }
      }
    } finally {
      await stop(r);
    }
  });
}

t.test("a fault on one address leaves the other answering", async (t) => {
  const r = await startStandIn({ ...base, faults: { healthz: { refuse: true } } });
  try {
    const o = await runAll(r);
    t.ok(o.mode.ok && o.configz.ok && o.metrics.ok);
    t.ok(!o.health.ok && o.health.error.kind === "unreachable");
  } finally {
    await stop(r);
  }
});

const promtool = "/usr/bin/promtool";
t.test(
  "promtool parses the stand-in's /metrics; its only complaints are upstream's own names",
  { skip: existsSync(promtool) ? false : `${promtool} is not installed` },
  async (t) => {
    for (const name of ["ipvs-v1.31", "iptables-default-v1.33", "nftables-failing-v1.37"]) {
      const r = await startStandIn(loadScenario(name));
      try {
        const body = await (await fetch(`${r.metricsUrl}/metrics`)).text();
        const p = spawnSync(promtool, ["check", "metrics"], { input: body, encoding: "utf8" });
        const lines = `${p.stdout}${p.stderr}`.split("\n").filter((l) => l.trim() !== "");
        t.ok(lines.length > 0, `${name}: promtool said something (it lints the _total gauges)`);
        for (const l of lines) {
          t.match(
            l,
            /^kubeproxy_sync_proxy_rules_(iptables|no_local_endpoints)_total non-counter metrics/,
            l,
          );
        }
      } finally {
        await stop(r);
      }
    }
  },
);

t.test("probes are registered under the names the report expects", async (t) => {
  t.same(
    probes.map((p) => p.name),
    ["kube-proxy-mode", "kube-proxy-configz", "kube-proxy-metrics", "kube-proxy-health"],
  );
});
