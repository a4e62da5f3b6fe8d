// Hostile agents against the built collector: answers that are small in bytes but huge to parse. A byte
// cap alone let one agent answering 16 MiB of small JSON objects take the collector to 358 MB, five to
// 655 MB, past the Deployment's 512Mi limit; and 450 KB of empty objects where the digest wants
// findings makes zod list 1.2 million issues (over 1 GB). Loopback STAND-IN agents answer such bodies
// beside agents answering the recorded 10,000-Service report; the collector (a child process, so its
// peak RSS is its own) must name each hostile answer as that node's failure, keep every other node,
// and stay far under its memory limit.
import t from "tap";
import { existsSync, readFileSync, mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "../helpers/uml.js";
import { freePort } from "../helpers/prometheus.js";
import { staleBuild } from "../helpers/built.js";
import { spawnOwned, stopOwned } from "../helpers/children.js";
import { COLLECTOR_CLI, startAgent } from "./collector-fleet.js";

const MiB = 1024 * 1024;
const stale = staleBuild([
  "collector/cli.ts",
  "collector/sources/agents.ts",
  "collector/sources/agents/transport.ts",
  "collector/gather/observe.ts",
]);
if (stale) throw new Error(stale);

/** The collector Deployment's memory limit, from the manifest itself. */
function manifestLimitBytes(): number {
  const yaml = readFileSync(join(REPO_ROOT, "manifests/core/collector-deployment.yaml"), "utf8");
  const m = /limits:\s*\n\s*memory:\s*(\d+)Mi/.exec(yaml);
  if (!m) throw new Error("no memory limit in manifests/core/collector-deployment.yaml");
  return Number(m[1]) * MiB;
}

const now = new Date().toISOString();
const recorded = JSON.parse(
  readFileSync(join(REPO_ROOT, "bench/results/samples/ipvs-10000.report.json"), "utf8"),
) as Record<string, unknown>;
const realReport = (node: string) => JSON.stringify({ ...recorded, node, scannedAt: now });

/** A FleetDigest's head, then `fill` repeated until the body is about `bytes` long. */
function digestOf(fill: string, bytes: number): Buffer {
  const head = `{"schemaVersion":"1","agentVersion":"0.1.0","node":"x","scannedAt":"${now}","findings":[`;
  const n = Math.max(1, Math.floor((bytes - head.length - 2) / (fill.length + 1)));
  return Buffer.from(`${head}${Array(n).fill(fill).join(",")}]}`);
}

const HOSTILE = {
  // Over the byte cap: refused by its declared length, or while read when it declares none.
  "objects-15mib-declared": { body: digestOf('{"a":1}', 15 * MiB), declare: true },
  "objects-15mib-chunked": { body: digestOf('{"a":1}', 15 * MiB), declare: false },
  "objects-15mib-chunked-2": { body: digestOf("{}", 15 * MiB), declare: false },
  // Under the byte cap: refused by what a parse would build.
  "objects-3mib": { body: digestOf("{}", 3 * MiB), declare: true },
  "deep-2mib": { body: Buffer.from(`${"[".repeat(MiB)}${"]".repeat(MiB)}`), declare: true },
  // Under every count: 150,000 empty findings; judging them is what costs (zod's issue per field).
  "empty-findings": { body: digestOf("{}", 450 * 1024), declare: true },
} as const;

function hostileAgent(ip: string, port: number, h: { body: Buffer; declare: boolean }) {
  const server = http.createServer((req, res) => {
    res.writeHead(200, {
      "content-type": "application/json",
      ...(h.declare ? { "content-length": String(h.body.length) } : {}),
    });
    if (h.declare) return res.end(h.body);
    // No declared length: the body arrives in 64 KiB chunks, as a stream the collector must cut.
    let at = 0;
    const more = () => {
      while (at < h.body.length) {
        const next = h.body.subarray(at, at + 64 * 1024);
        at += next.length;
        if (!res.write(next)) return void res.once("drain", more);
      }
      res.end();
    };
    more();
  });
  return new Promise<() => Promise<void>>((resolve) =>
    server.listen(port, ip, () =>
      resolve(
        () =>
          new Promise((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      ),
    ),
  );
}

/**
 * The collector CLI as a child, with a watchdog: a collector without the bounds would take many GB of
 * this shared machine (zod names every missing field of millions of objects), so past 1.5 GB RSS it is
 * killed, and the test fails by name. Not a limit on the collector itself: a V8 flag such as
 * --max-old-space-size would also override its judging thread's own heap limit.
 */
async function collectorWatched(args: string[], env: NodeJS.ProcessEnv) {
  // tap puts its process-info loader into every child's NODE_OPTIONS, whatever env is given; it costs
  // ~190 MB of RSS on its own, so env(1) takes it out before node starts.
  const child = spawnOwned("/usr/bin/env", ["-u", "NODE_OPTIONS", process.execPath, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env,
  });
  let stdout = "";
  let stderr = "";
  let killedAtKb: number | null = null;
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const watch = setInterval(() => {
    const kb = Number(/VmRSS:\s*(\d+) kB/.exec(readIf(`/proc/${child.pid}/status`))?.[1] ?? 0);
    if (kb > 1.5 * 1024 * 1024 && killedAtKb === null) {
      killedAtKb = kb;
      void stopOwned(child, 0);
    }
  }, 100);
  const code = await new Promise<number | null>((r) => child.on("close", (c) => r(c)));
  clearInterval(watch);
  return { code, stdout, stderr, killedAtKb };
}

const readIf = (p: string) => {
  try {
    return readFileSync(p, "utf8");
  } catch {
    return "";
  }
};

t.test("hostile answers are their nodes' named failures; the rest are kept; RSS stays low", async (t) => {
  const port = await freePort();
  const healthy = ["ok-0", "ok-1", "ok-2"].map((node, i) => ({ node, ip: `127.0.1.${10 + i}` }));
  const old = { node: "ok-old", ip: "127.0.1.20" }; // an agent older than /report/fleet: its whole /report
  const hostile = Object.entries(HOSTILE).map(([node, h], i) => ({ node, ip: `127.0.1.${30 + i}`, h }));
  const stops = await Promise.all([
    ...healthy.map((a) => startAgent(a.ip, port, { report: realReport(a.node) }, { current: true })),
    startAgent(old.ip, port, { report: realReport(old.node) }),
    ...hostile.map((a) => hostileAgent(a.ip, port, a.h)),
  ]);
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-hostile-"));
  t.teardown(async () => {
    await Promise.all(stops.map((s) => s()));
    rmSync(dir, { recursive: true, force: true });
  });

  const statusFile = join(dir, "status");
  // The collector's own peak RSS (VmHWM), written as it exits.
  const peakHook =
    "data:text/javascript,import{readFileSync as r,writeFileSync as w}from'node:fs';" +
    "process.on('exit',()=>w(process.env.PEAK_FILE,r('/proc/self/status','utf8')))";
  const all = [...healthy, old, ...hostile];
  const res = await collectorWatched(
    [
      "--import",
      peakHook,
      COLLECTOR_CLI,
      "report",
      "--source",
      "static",
      "--output",
      "json",
      "--timeout-ms",
      "120000",
      ...all.map((a) => ["--agents", `${a.node}=http://${a.ip}:${port}`]).flat(),
    ],
    { ...process.env, PEAK_FILE: statusFile, NO_COLOR: "1" },
  );
  t.comment(`exit ${res.code}; stderr: ${res.stderr.slice(0, 2000)}`);
  t.notOk(res.killedAtKb, `the test's watchdog did not have to stop the collector (${res.killedAtKb} kB)`);
  // No status file: the collector died before it could exit (out of memory), which fails here by name.
  const status = existsSync(statusFile) ? readFileSync(statusFile, "utf8") : "";
  t.not(res.code, null, "the collector was not killed (no out-of-memory abort)");
  t.ok(status, "the collector exited by itself and wrote its peak RSS");
  if (!status) return;
  const peakKb = Number(/VmHWM:\s*(\d+) kB/.exec(status)?.[1]);
  const limit = manifestLimitBytes();
  t.comment(`collector peak RSS ${Math.round(peakKb / 1024)} MB; the manifest's limit ${limit / MiB} MiB`);
  // ~250 MB here with every bound in place (a one-node gather alone peaks near 140 MB); without them
  // the watchdog above stops the collector past 1.5 GB. A quarter of the limit is the margin.
  t.ok(peakKb * 1024 < limit * 0.75, "peak RSS stays under three quarters of the Deployment's memory limit");

  const fleet = JSON.parse(res.stdout) as {
    nodes: { node: string; outcome: string; reason: string | null }[];
  };
  const byNode = new Map(fleet.nodes.map((n) => [n.node, n]));
  for (const a of [...healthy, old]) t.equal(byNode.get(a.node)?.outcome, "ok", `${a.node} is kept`);
  for (const a of hostile) {
    const o = byNode.get(a.node);
    t.equal(o?.outcome, "garbage", `${a.node}: ${o?.reason}`);
    t.match(o?.reason ?? "", /answer too large/, `${a.node} is named as too large`);
  }
});
