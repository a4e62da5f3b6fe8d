// Stand-in agents for the fleet benchmark: one process answering GET /<node>/report and
// /<node>/report/fleet for thousands of nodes on a few loopback ports, with real NodeReport bodies
// (recorded by the node benchmark) and their FleetDigests made by the agent's own fleetDigestOf, and
// a share of nodes slow, hung, answering garbage or an error. Nodes that are down get a URL on
// a port nobody listens on (connection refused) from fleetTargets(), not from here.
//   node dist/bench/fleet/agents.js PORT_BASE PORTS REPORT.json...   (prints "ready" when listening)
import { createServer, type Server } from "node:http";
import { readFileSync } from "node:fs";
import { fleetDigestOf, NodeReport } from "../../agent/contract.js";

type Behaviour = "ok" | "slow" | "hung" | "garbage" | "error" | "down";

/** Deterministic mix per node index: 90 % fine, 5 % slow, 2 % down, 1 % garbage, 1 % 500, 0.2 % hung. */
export function behaviour(i: number): Behaviour {
  const r = (i * 7919) % 1000;
  if (r < 50) return "slow";
  if (r < 70) return "down";
  if (r < 80) return "garbage";
  if (r < 90) return "error";
  if (r < 92) return "hung";
  return "ok";
}

/** Slow nodes answer after 0.2–2 s, inside the collector's 5 s call deadline. */
const slowMs = (i: number) => 200 + ((i * 104729) % 1800);

/** The agent's default scan interval (agent/config.ts): a live agent's report is at most this old. */
const SCAN_INTERVAL_MS = 60_000;

/**
 * A recorded report, cut around its `node` and `scannedAt` so each node's answer is the shared bytes
 * plus two short strings: 5,000 nodes of 176 KB reports cost the stand-in one copy, not 880 MB.
 */
interface Template {
  parts: [Buffer, Buffer, Buffer];
  scanDurationMs: number;
}

const NODE = "\u0000node\u0000";
const SCANNED = "\u0000scannedAt\u0000";

export function template(
  report: { node: string; scannedAt: string; scanDurationMs?: number },
  // A FleetDigest carries no scan duration: its report's, so both routes give one scan time.
  scanDurationMs = report.scanDurationMs ?? 0,
): Template {
  const text = JSON.stringify({ ...report, node: NODE, scannedAt: SCANNED });
  const [a, rest] = split(text, JSON.stringify(NODE));
  const [b, c] = split(rest, JSON.stringify(SCANNED));
  return {
    parts: [Buffer.from(a), Buffer.from(b), Buffer.from(c)],
    scanDurationMs,
  };
}

/** A recorded node's two bodies: /report, and /report/fleet as a current agent renders it. */
interface Recorded {
  report: Template;
  fleet: Template;
}

export function recorded(reportJson: unknown): Recorded {
  const report = NodeReport.parse(reportJson);
  return { report: template(report), fleet: template(fleetDigestOf(report), report.scanDurationMs) };
}

function split(s: string, mark: string): [string, string] {
  const at = s.indexOf(mark);
  if (at < 0 || s.indexOf(mark, at + 1) >= 0) throw new Error(`report template: ${mark} not found once`);
  return [s.slice(0, at), s.slice(at + mark.length)];
}

/**
 * What a live agent on node i would answer at `nowMs` (agent/server/app.ts): the report of its last
 * completed scan, scannedAt being that scan's start, and the time since it completed in
 * x-report-age-seconds. Each node completes a scan every SCAN_INTERVAL_MS at its own phase, as
 * agents started at different times do; the recorded report's old scan time is not served.
 */
export function liveAnswer(t: Template, i: number, nowMs: number) {
  const phase = (i * 7919) % SCAN_INTERVAL_MS;
  const completedAtMs =
    nowMs - ((((nowMs - phase) % SCAN_INTERVAL_MS) + SCAN_INTERVAL_MS) % SCAN_INTERVAL_MS);
  const scannedAt = new Date(completedAtMs - t.scanDurationMs).toISOString();
  const chunks = [
    t.parts[0],
    Buffer.from(JSON.stringify(`node-${i}`)),
    t.parts[1],
    Buffer.from(JSON.stringify(scannedAt)),
    t.parts[2],
  ];
  return {
    chunks,
    headers: {
      "content-type": "application/json; charset=utf-8",
      "content-length": String(chunks.reduce((n, c) => n + c.length, 0)),
      "x-report-age-seconds": ((nowMs - completedAtMs) / 1000).toFixed(3),
      "last-modified": new Date(completedAtMs).toUTCString(),
    },
  };
}

/**
 * One port's server: node i answers per behaviour(i), a healthy one with liveAnswer of recorded node
 * i mod n, on /report or /report/fleet (a fault answers the same on both).
 */
export function standInServer(nodes: readonly Recorded[], now: () => number = Date.now): Server {
  const server = createServer((req, res) => {
    const m = /^\/node-(\d+)\/report(\/fleet)?$/.exec(req.url ?? "");
    if (!m) {
      res.writeHead(404).end();
      return;
    }
    const i = Number(m[1]);
    const send = () => {
      const n = nodes[i % nodes.length]!;
      const a = liveAnswer(m[2] ? n.fleet : n.report, i, now());
      res.writeHead(200, a.headers);
      for (const c of a.chunks) res.write(c);
      res.end();
    };
    switch (behaviour(i)) {
      case "slow":
        setTimeout(send, slowMs(i));
        return;
      case "hung":
        return; // never answers: the collector's deadline ends it
      case "garbage":
        res.writeHead(200, { "content-type": "application/json" }).end('{"node": "half a report');
        return;
      case "error":
        res.writeHead(500, { "content-type": "application/json" }).end('{"error":"internal error"}');
        return;
      default:
        send();
    }
  });
  server.keepAliveTimeout = 60_000;
  return server;
}

function main(): void {
  const [base, count, ...files] = process.argv.slice(2);
  const templates = files.map((f) => recorded(JSON.parse(readFileSync(f, "utf8"))));
  let listening = 0;
  for (let p = 0; p < Number(count); p++) {
    standInServer(templates).listen(Number(base) + p, "127.0.0.1", () => {
      if (++listening === Number(count)) process.stdout.write("ready\n");
    });
  }
}

if (process.argv[1]?.endsWith("agents.js")) main();
