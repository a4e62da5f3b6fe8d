// Run by node INSIDE a test's network namespace (netns-clients.ts starts it there): HTTP clients that
// pick their source address, so a server in the namespace sees a client from a non-loopback address.
// Only node: imports, so that node runs this file as it is. One JSON job on stdin, one JSON answer on
// stdout.
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import net from "node:net";
import tls from "node:tls";

interface Target {
  host: string;
  port: number;
  tls?: boolean;
}

/** Each raw request line on a connection of its own, from `from`: what the server answered. */
interface RawJob {
  kind: "raw";
  target: Target;
  from: string;
  /** Request targets exactly as sent: "GET <target> HTTP/1.1". */
  targets: string[];
  headers?: Record<string, string>;
}

/**
 * The attack: `count` connections from `attacker`, each sending part of a request and then nothing,
 * redialled `redialMs` after the server closes it. Once every first dial has an outcome, the probes
 * run as the kubelet runs them: a new connection each, a timeout, one every `periodMs`.
 */
interface FloodJob {
  kind: "flood";
  target: Target;
  attacker: { from: string; count: number; redialMs: number; halfSent: string };
  probes: { name: string; from: string; path: string }[];
  rounds: number;
  periodMs: number;
  timeoutMs: number;
}

type Job = RawJob | FloodJob;

const read = async (): Promise<Job> => {
  let s = "";
  for await (const c of process.stdin) s += String(c);
  return JSON.parse(s) as Job;
};

function raw(target: Target, from: string, line: string, headers: Record<string, string>) {
  return new Promise<{ target: string; status: number | null; body: string; error?: string }>((resolve) => {
    const opts = { host: target.host, port: target.port, localAddress: from };
    const s = target.tls
      ? tls.connect({ ...opts, rejectUnauthorized: false, servername: undefined })
      : net.connect(opts);
    const head = Object.entries({ host: "x", connection: "close", ...headers })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join("");
    s.once(target.tls ? "secureConnect" : "connect", () => s.write(`GET ${line} HTTP/1.1\r\n${head}\r\n`));
    let data = "";
    s.setEncoding("utf8").on("data", (d: string) => (data += d));
    s.setTimeout(60_000, () => s.destroy(new Error("no answer in 60 s")));
    let error: string | undefined;
    s.on("error", (e) => (error = e.message));
    s.on("close", () => {
      const m = /^HTTP\/1\.1 (\d{3}) /.exec(data);
      const body = data.slice(data.indexOf("\r\n\r\n") + 4);
      resolve({ target: line, status: m ? Number(m[1]) : null, body, ...(error ? { error } : {}) });
    });
  });
}

async function runRaw(job: RawJob) {
  const out = [];
  // A few at a time: the server's connection cap is not what these tests are about.
  for (let i = 0; i < job.targets.length; i += 8)
    out.push(
      ...(await Promise.all(
        job.targets.slice(i, i + 8).map((l) => raw(job.target, job.from, l, job.headers ?? {})),
      )),
    );
  return out;
}

/** As the kubelet's HTTP probe: a new connection, success on 200-399 within the timeout. */
function probe(job: FloodJob, from: string, path: string) {
  return new Promise<boolean>((resolve) => {
    const req = (job.target.tls ? httpsRequest : httpRequest)(
      {
        host: job.target.host,
        port: job.target.port,
        path,
        localAddress: from,
        agent: false,
        rejectUnauthorized: false,
        timeout: job.timeoutMs,
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 400));
        res.on("error", () => resolve(false));
      },
    );
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", () => resolve(false));
    req.end();
  });
}

async function runFlood(job: FloodJob) {
  let attacking = true;
  let firstOutcomes = 0;
  let closedByServer = 0;
  let ready: () => void = () => undefined;
  const allDialled = new Promise<void>((r) => (ready = r));
  const sockets = new Set<net.Socket>();
  const connectedAt = new Map<net.Socket, number>();
  const dial = (first: boolean) => {
    if (!attacking) return;
    const opts = { host: job.target.host, port: job.target.port, localAddress: job.attacker.from };
    const s = net.connect(opts);
    sockets.add(s);
    let counted = false;
    const outcome = () => {
      if (first && !counted) {
        counted = true;
        if (++firstOutcomes === job.attacker.count) ready();
      }
    };
    s.on("connect", () => {
      connectedAt.set(s, Date.now());
      // Over TLS the attacker never sends a ClientHello; over HTTP, headers that never end.
      if (!job.target.tls) s.write(job.attacker.halfSent);
      outcome();
    });
    s.resume();
    s.on("error", () => undefined);
    s.on("close", () => {
      sockets.delete(s);
      connectedAt.delete(s);
      outcome();
      if (!attacking) return;
      closedByServer++;
      setTimeout(() => dial(false), job.attacker.redialMs);
    });
  };
  for (let i = 0; i < job.attacker.count; i++) dial(true);
  await allDialled;
  // Held: still open a second after connecting. A server turning a connection away accepts it and
  // closes it at once, so the attacker's end sees it connect either way.
  await new Promise((res) => setTimeout(res, 1000));
  const heldAtStart = [...connectedAt.values()].filter((at) => Date.now() - at >= 1000).length;
  const answered: Record<string, boolean[]> = Object.fromEntries(job.probes.map((p) => [p.name, []]));
  for (let round = 0; round < job.rounds; round++) {
    const started = Date.now();
    const r = await Promise.all(job.probes.map((p) => probe(job, p.from, p.path)));
    job.probes.forEach((p, i) => answered[p.name]!.push(r[i]!));
    const wait = job.periodMs - (Date.now() - started);
    if (wait > 0 && round < job.rounds - 1) await new Promise((res) => setTimeout(res, wait));
  }
  attacking = false;
  for (const s of sockets) s.destroy();
  return { answered, heldAtStart, closedByServer };
}

const job = await read();
const answer = job.kind === "raw" ? await runRaw(job) : await runFlood(job);
process.stdout.write(JSON.stringify(answer));
