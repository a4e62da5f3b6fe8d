// A real Prometheus (Debian's /usr/bin/prometheus) for tests: started on loopback with a temp config
// and storage dir, queried through its HTTP API. Shared by the agent's and the collector's tests.
import { type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnOwned } from "./children.js";

export const PROMETHEUS = "/usr/bin/prometheus";
export const PROMTOOL = "/usr/bin/promtool";

export interface ScrapeJob {
  job: string;
  /** host:port entries. */
  targets: string[];
  metricsPath?: string;
  /** Labels put on every target of the job (e.g. { node: "node-a" }). */
  labels?: Record<string, string>;
  /** https with this CA (tls_config.ca_file). */
  tlsCaFile?: string;
  /** basic_auth for the scrape. */
  basicAuth?: { username: string; password: string };
  /** Labels per target (e.g. the __meta_* labels service discovery would give it), one static_configs each. */
  targetLabels?: Record<string, Record<string, string>>;
  /** relabel_configs, in Prometheus' own (snake_case) form. */
  relabelConfigs?: Record<string, unknown>[];
}

export interface StartOptions {
  jobs: ScrapeJob[];
  scrapeIntervalS?: number;
  /** Rule files to load (absolute paths), e.g. the shipped PrometheusRule's groups. */
  ruleFiles?: string[];
  evaluationIntervalS?: number;
}

/** One sample of an instant vector. */
export interface PromSample {
  metric: Record<string, string>;
  value: number;
  timestamp: number;
}

export interface PrometheusServer {
  /** Base URL, e.g. http://127.0.0.1:41234 */
  url: string;
  dir: string;
  /** Instant query through /api/v1/query; throws on an API error. */
  query(expr: string): Promise<PromSample[]>;
  /** Polls `query(expr)` until `accept` holds (or the deadline passes: then throws with the last result). */
  waitFor(expr: string, accept: (s: PromSample[]) => boolean, timeoutMs?: number): Promise<PromSample[]>;
  /** Prometheus' own log so far (stderr), for failure messages. */
  log(): string;
  stop(): Promise<void>;
}

/** A TCP port free on `host` (default 127.0.0.1) right now. */
export async function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, host, () => {
      const a = s.address();
      s.close(() => resolve(typeof a === "object" && a !== null ? a.port : 0));
    });
  });
}

function yamlString(s: string): string {
  return JSON.stringify(s); // JSON strings are valid YAML flow scalars
}

function configYaml(o: StartOptions): string {
  const interval = `${o.scrapeIntervalS ?? 1}s`;
  const lines = [
    "global:",
    `  scrape_interval: ${interval}`,
    `  scrape_timeout: ${interval}`,
    `  evaluation_interval: ${o.evaluationIntervalS ?? 1}s`,
  ];
  if (o.ruleFiles && o.ruleFiles.length > 0) {
    lines.push("rule_files:", ...o.ruleFiles.map((f) => `  - ${yamlString(f)}`));
  }
  lines.push("scrape_configs:");
  for (const j of o.jobs) {
    lines.push(`  - job_name: ${yamlString(j.job)}`);
    if (j.metricsPath) lines.push(`    metrics_path: ${yamlString(j.metricsPath)}`);
    if (j.tlsCaFile)
      lines.push("    scheme: https", "    tls_config:", `      ca_file: ${yamlString(j.tlsCaFile)}`);
    if (j.basicAuth)
      lines.push(
        "    basic_auth:",
        `      username: ${yamlString(j.basicAuth.username)}`,
        `      password: ${yamlString(j.basicAuth.password)}`,
      );
    if (j.relabelConfigs && j.relabelConfigs.length > 0)
      // JSON is YAML: one flow mapping per relabelling.
      lines.push("    relabel_configs:", ...j.relabelConfigs.map((r) => `      - ${JSON.stringify(r)}`));
    lines.push("    static_configs:");
    for (const target of j.targetLabels ? j.targets : [null]) {
      const targets = target === null ? j.targets : [target];
      lines.push(`      - targets: [${targets.map(yamlString).join(", ")}]`);
      const labels = { ...j.labels, ...(target === null ? {} : j.targetLabels?.[target]) };
      if (Object.keys(labels).length > 0) {
        lines.push("        labels:");
        for (const [k, v] of Object.entries(labels)) lines.push(`          ${k}: ${yamlString(v)}`);
      }
    }
  }
  return `${lines.join("\n")}\n`;
}

async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

/** Starts Prometheus and resolves once /-/ready answers 200. Always `stop()` it (t.teardown). */
export async function startPrometheus(opts: StartOptions): Promise<PrometheusServer> {
  const dir = await mkdtemp(join(tmpdir(), "proxyscope-prom-"));
  const config = join(dir, "prometheus.yml");
  await writeFile(config, configYaml(opts));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawnOwned(
    PROMETHEUS,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--web.console.templates=/dev/null",
      "--web.console.libraries=/dev/null",
      "--log.level=warn",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (d: string) => {
    stderr = (stderr + d).slice(-64 * 1024);
  });
  let exited: number | null = null;
  const exit = new Promise<void>((r) =>
    child.once("exit", (code) => {
      exited = code ?? -1;
      r();
    }),
  );

  const stop = async () => {
    if (exited === null) {
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exit;
      clearTimeout(killer);
    }
    await rm(dir, { recursive: true, force: true });
  };

  for (let i = 0; ; i++) {
    if (exited !== null) {
      await rm(dir, { recursive: true, force: true });
      throw new Error(`prometheus exited ${exited} before it was ready:\n${stderr}`);
    }
    try {
      const r = await fetch(`${url}/-/ready`);
      if (r.status === 200) break;
    } catch {
      // not listening yet
    }
    if (i > 600) {
      await stop();
      throw new Error(`prometheus not ready after 60 s:\n${stderr}`);
    }
    await sleep(100);
  }

  const query = async (expr: string): Promise<PromSample[]> => {
    const r = await fetch(`${url}/api/v1/query?${new URLSearchParams({ query: expr })}`);
    const body = (await r.json()) as {
      status: string;
      error?: string;
      data?: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] };
    };
    if (body.status !== "success" || !body.data) throw new Error(`query ${expr}: ${body.error ?? r.status}`);
    if (body.data.resultType !== "vector")
      throw new Error(`query ${expr}: ${body.data.resultType}, not a vector`);
    return body.data.result.map((s) => ({
      metric: s.metric,
      value: Number(s.value[1]),
      timestamp: s.value[0],
    }));
  };

  const waitFor = async (expr: string, accept: (s: PromSample[]) => boolean, timeoutMs = 300_000) => {
    const deadline = Date.now() + timeoutMs;
    let last: PromSample[] = [];
    for (;;) {
      last = await query(expr);
      if (accept(last)) return last;
      if (Date.now() > deadline) {
        throw new Error(`${expr} never matched; last result ${JSON.stringify(last)}\n${stderr}`);
      }
      await sleep(250);
    }
  };

  return { url, dir, query, waitFor, log: () => stderr, stop };
}

/** `promtool check metrics` on an exposition text: the problems it names (empty when clean). */
export async function promtoolCheckMetrics(
  exposition: string,
): Promise<{ exitCode: number; output: string }> {
  const child = spawnOwned(PROMTOOL, ["check", "metrics"], { stdio: ["pipe", "pipe", "pipe"] });
  let output = "";
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (output += d));
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (output += d));
  const done = new Promise<number>((r) => child.once("close", (code) => r(code ?? -1)));
  child.stdin!.end(exposition);
  return { exitCode: await done, output: output.trim() };
}
