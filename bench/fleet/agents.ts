// Stand-in agents for the fleet benchmark: one process answering GET /<node>/report for thousands
// of nodes on a few loopback ports, with real NodeReport bodies (recorded by the node benchmark)
// and a share of nodes slow, hung, answering garbage or an error. Nodes that are down get a URL on
// a port nobody listens on (connection refused) from fleetTargets(), not from here.
//   node dist/bench/fleet/agents.js PORT_BASE PORTS REPORT.json...   (prints "ready" when listening)
import { createServer } from "node:http";
import { readFileSync } from "node:fs";

export type Behaviour = "ok" | "slow" | "hung" | "garbage" | "error" | "down";

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
export const slowMs = (i: number) => 200 + ((i * 104729) % 1800);

function main(): void {
  const [base, count, ...files] = process.argv.slice(2);
  const bodies = files.map((f) => JSON.parse(readFileSync(f, "utf8")) as { node: string });
  const cache = new Map<number, string>();
  const body = (i: number) => {
    let b = cache.get(i);
    if (b === undefined) {
      b = JSON.stringify({ ...bodies[i % bodies.length]!, node: `node-${i}` });
      if (cache.size < 20_000) cache.set(i, b);
    }
    return b;
  };
  let listening = 0;
  for (let p = 0; p < Number(count); p++) {
    const server = createServer((req, res) => {
      const m = /^\/node-(\d+)\/report$/.exec(req.url ?? "");
      if (!m) {
        res.writeHead(404).end();
        return;
      }
      const i = Number(m[1]);
      const send = () => res.writeHead(200, { "content-type": "application/json" }).end(body(i));
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
    server.listen(Number(base) + p, "127.0.0.1", () => {
      if (++listening === Number(count)) process.stdout.write("ready\n");
    });
  }
}

if (process.argv[1]?.endsWith("agents.js")) main();
