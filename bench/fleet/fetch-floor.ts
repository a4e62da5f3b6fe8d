// The collector's floor (row f): every agent's document fetched once over plain HTTP, as many at a
// time and with the same per-call deadline as the collector's defaults, bodies counted and dropped;
// no parsing, no retry, no report. What moving the fleet's bytes costs on this machine. PATH is
// /report/fleet (what the collector asks, so the least work that answers) or /report (the old floor).
//   node dist/bench/fleet/fetch-floor.js TARGETS_FILE [CONCURRENCY] [TIMEOUT_MS] [PATH]   (prints one JSON line)
import { readFileSync } from "node:fs";
import { Agent, request } from "node:http";

const [file, conc = "32", timeout = "5000", path = "/report"] = process.argv.slice(2);
const urls = readFileSync(file!, "utf8")
  .split("\n")
  .filter(Boolean)
  .map((l) => `${l.split(" ")[1]}${path}`);
const agent = new Agent({ keepAlive: true, maxSockets: Number(conc) });
let bytes = 0;
const outcome: Record<string, number> = {};
const one = (url: string) =>
  new Promise<void>((resolve) => {
    const done = (k: string) => {
      outcome[k] = (outcome[k] ?? 0) + 1;
      resolve();
    };
    const req = request(url, { agent, timeout: Number(timeout) }, (res) => {
      res.on("data", (c: Buffer) => (bytes += c.length));
      res.on("end", () => done(String(res.statusCode)));
      res.on("error", () => done("error"));
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", (e) => done(e.message === "timeout" ? "timeout" : "error"));
    req.end();
  });
let next = 0;
await Promise.all(
  Array.from({ length: Number(conc) }, async () => {
    while (next < urls.length) await one(urls[next++]!);
  }),
);
agent.destroy();
process.stdout.write(`${JSON.stringify({ urls: urls.length, bytes, outcome })}\n`);
