// A test's own network namespace with addresses that are not loopback, and HTTP clients run inside
// it from a chosen source address (netns-clients-script.ts): how the tests play a client on the node
// network — the kubelet, Prometheus, an attacker — against a server listening in that namespace.
import { fileURLToPath } from "node:url";
import type { Test } from "tap";
import { spawnOwned, stopOwned } from "./children.js";
import { NetNs } from "./netns.js";

const SCRIPT = fileURLToPath(new URL("./netns-clients-script.ts", import.meta.url));

/** The node's own address (what the kubelet probes a host-network pod on, and probes from). */
export const NODE_IP = "10.233.0.1";
/** Another host on the node network. */
export const ATTACKER_IP = "10.233.0.2";
/** Prometheus. */
export const PROMETHEUS_IP = "10.233.0.3";

/**
 * A namespace with loopback up and the three addresses above on it (this kernel may have no dummy
 * interfaces; an address is local wherever it is, and not in 127/8); gone at teardown.
 */
export function nodeNetwork(t: Test): NetNs {
  const ns = NetNs.create();
  t.teardown(() => ns.destroy());
  ns.must(["ip", "link", "set", "lo", "up"]);
  for (const a of [NODE_IP, ATTACKER_IP, PROMETHEUS_IP])
    ns.must(["ip", "addr", "add", `${a}/32`, "dev", "lo"]);
  return ns;
}

export interface Target {
  host: string;
  port: number;
  tls?: boolean;
}

export interface RawAnswer {
  target: string;
  status: number | null;
  body: string;
  error?: string;
}

export interface FloodAnswer {
  /** Per probe name, one entry a round: answered within the timeout with 200-399. */
  answered: Record<string, boolean[]>;
  /** Attacker connections open for a second or more when the probes began. */
  heldAtStart: number;
  closedByServer: number;
}

function runScript<T>(t: Test, ns: NetNs, job: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawnOwned("ip", ["netns", "exec", ns.name, process.execPath, SCRIPT], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    t.teardown(() => stopOwned(child));
    let out = "";
    let err = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d));
    child.once("error", reject);
    child.once("exit", (code) => {
      if (code !== 0) return reject(new Error(`clients in ${ns.name} exited ${code}: ${err}`));
      try {
        resolve(JSON.parse(out) as T);
      } catch {
        reject(new Error(`clients in ${ns.name}: unparsable answer ${out.slice(0, 200)} ${err}`));
      }
    });
    child.stdin!.end(JSON.stringify(job));
  });
}

/** Each request target (sent exactly as given) on a connection of its own from `from`. */
export function rawRequests(
  t: Test,
  ns: NetNs,
  target: Target,
  from: string,
  targets: readonly string[],
  headers: Record<string, string> = {},
): Promise<RawAnswer[]> {
  return runScript(t, ns, { kind: "raw", target, from, targets, headers });
}

export interface FloodOptions {
  target: Target;
  attacker: { from: string; count: number; redialMs: number; halfSent: string };
  probes: { name: string; from: string; path: string }[];
  rounds: number;
  periodMs: number;
  timeoutMs: number;
}

/** Held half-sent connections from one address while probes run on the kubelet's schedule. */
export function flood(t: Test, ns: NetNs, opts: FloodOptions): Promise<FloodAnswer> {
  return runScript(t, ns, { kind: "flood", ...opts });
}
