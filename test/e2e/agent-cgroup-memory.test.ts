// The agent in a real memory cgroup with the DaemonSet's limit, scanning a huge listing. The scan
// thread's heap limit was 512 MB, above the DaemonSet's limit (then 256Mi, now 320Mi): a 10 MiB listing took the agent to
// 707 MB, so in a pod the kernel OOM-killed the whole agent before the thread's own limit acted. Now
// the thread's limit comes from the cgroup (agent/io/cgroup-memory.ts), and the same scan must end as
// a named scan failure (proxyscope_scan_failures_total) while the agent keeps serving; the next scan,
// over an ordinary listing, runs on a fresh thread. The `ip` STAND-IN prints the listing; the other
// tools are the host's.
import t from "tap";
import { randomBytes } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  rmdirSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { memoryLimitFiles } from "../../agent/parse/cgroup-memory.js";
import { scanThreadLimits } from "../../agent/server/scan-thread.js";
import { REPO_ROOT } from "../helpers/uml.js";
import { agentBuilt, sample, startAgent, toolDirWith, type RunningAgent } from "./agent-process.js";

t.setTimeout(1_800_000);
const MiB = 1024 * 1024;

/** The DaemonSet's memory limit, from the manifest itself. */
function daemonSetLimitBytes(): number {
  const yaml = readFileSync(join(REPO_ROOT, "manifests/core/agent-daemonset.yaml"), "utf8");
  const m = /limits:\s*\n\s*memory:\s*(\d+)Mi/.exec(yaml);
  if (!m) throw new Error("no memory limit in manifests/core/agent-daemonset.yaml");
  return Number(m[1]) * MiB;
}

interface Cgroup {
  dir: string;
  version: 1 | 2;
  /** How many times the kernel's OOM killer acted in it. */
  oomKills(): number;
  remove(): void;
}

/**
 * A child of this process's own memory cgroup with `limit` set, or why none can be made here. Found
 * with the agent's own reading of /proc/self/cgroup and mountinfo (its first file is its own cgroup's).
 */
function childCgroup(limit: number): Cgroup | string {
  const own = memoryLimitFiles(
    readFileSync("/proc/self/cgroup", "utf8"),
    readFileSync("/proc/self/mountinfo", "utf8"),
  ).filter((f) => existsSync(f.path))[0];
  if (own === undefined) return "this process is in no memory cgroup with a limit file";
  const dir = join(dirname(own.path), `proxyscope-test-${randomBytes(4).toString("hex")}`);
  try {
    mkdirSync(dir);
    if (own.version === 2) writeFileSync(join(dir, "memory.max"), String(limit));
    else writeFileSync(join(dir, "memory.limit_in_bytes"), String(limit));
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    return `cannot make a memory cgroup under ${dirname(own.path)}: ${(e as Error).message}`;
  }
  const events = join(dir, own.version === 2 ? "memory.events" : "memory.oom_control");
  return {
    dir,
    version: own.version,
    oomKills: () => Number(/^oom_kill (\d+)$/m.exec(readFileSync(events, "utf8"))?.[1] ?? NaN),
    remove: () => rmdirSync(dir),
  };
}

/**
 * `ip -j -d addr show` with `n` entries in one interface's addr_info: valid ones for an ordinary node,
 * or empty objects, which a validation names one by one (the shape of listing that took the agent to
 * 707 MB).
 */
function addrListing(n: number, entry: (i: number) => string): string {
  const head = `[{"ifindex":1,"ifname":"lo","flags":["LOOPBACK","UP"],"mtu":65536,"operstate":"UNKNOWN","link_type":"loopback","addr_info":[`;
  return `${head}${Array.from({ length: n }, (_, i) => entry(i)).join(",")}]}]\n`;
}
const validAddress = (i: number) =>
  `{"family":"inet","local":"127.0.${(i >> 8) & 255}.${i & 255}","prefixlen":8,"scope":"host","label":"lo"}`;

const limit = daemonSetLimitBytes();
const made = agentBuilt() ? childCgroup(limit) : "run npm run build first";
// Not possible here (not root, no memory controller): a skip that says why. The derivation from
// recorded cgroup files is held by test/unit/io/cgroup-memory.test.ts either way.
const skip = typeof made === "string" ? made : false;

t.test(
  "a scan past the cgroup-derived heap limit fails by name; the agent keeps serving",
  { skip },
  async (t) => {
    const cg = made as Cgroup;
    const work = mkdtempSync(join(tmpdir(), "proxyscope-cgroup-"));
    const listing = join(work, "ip-addr.json");
    // 450,000 empty entries: 1.3 MB, within what a listing may hold (agent/parse/listing-bounds.ts), but
    // validating them names each one's missing field, a heap far past what the scan thread may have.
    const huge = addrListing(450_000, () => "{}");
    writeFileSync(listing, huge);
    // Every call of `ip` prints the listing (the route listings then fail to parse too: one probe).
    const tools = toolDirWith({ ip: `exec /bin/cat '${listing}'` });
    let agent: RunningAgent | null = null;
    t.teardown(async () => {
      await agent?.stop();
      cg.remove();
      tools.remove();
      rmSync(work, { recursive: true, force: true });
    });

    agent = await startAgent({
      // The agent starts inside the cgroup: the shell joins it, then becomes node (same pid).
      wrap: ["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', cg.dir],
      args: [
        "--scan-interval-s",
        "5",
        "--call-timeout-ms",
        "120000",
        "--probe-timeout-ms",
        "240000",
        "--tool-dir",
        tools.dir,
      ],
    });
    const a = agent;
    const listening = a.logs().find((l) => l.msg === "listening")!;
    t.equal(
      listening.containerMemoryLimitBytes,
      limit,
      `the agent read its cgroup's limit (${String(listening.containerMemoryLimitFrom)})`,
    );
    const heapMb = scanThreadLimits(limit).maxOldGenerationSizeMb!;
    t.equal(listening.scanThreadHeapMb, heapMb, `the scan thread's heap is ${heapMb} MB, not 512`);

    // Ends on the first scan's end, failed or not, or on the agent's death: a signal, not a deadline.
    const failed = await new Promise<boolean>((resolve) => {
      const tick = setInterval(() => {
        const ended = a.logs().find((l) => l.msg.startsWith("scan failed") || l.msg === "scan complete");
        if (ended !== undefined || !a.alive()) {
          clearInterval(tick);
          resolve(ended?.msg.startsWith("scan failed") ?? false);
        }
      }, 200);
    });
    t.ok(failed, "the scan failed by name");
    t.ok(a.alive(), "the agent was not killed");
    t.equal(cg.oomKills(), 0, "the kernel's OOM killer never acted in the agent's cgroup");
    if (!failed || !a.alive()) return;
    const why = a.logs().find((l) => l.msg.startsWith("scan failed"))!;
    t.match(
      JSON.stringify(why.err),
      /memory limit|out of memory/i,
      `the failure says why: ${JSON.stringify(why.err).slice(0, 200)}`,
    );
    t.equal((await a.get("/healthz")).status, 200, "still serving");
    const failures = Number(sample((await a.get("/metrics")).body, "proxyscope_scan_failures_total"));
    t.ok(failures >= 1, `counted in proxyscope_scan_failures_total (${failures})`);

    // An ordinary listing now: a later scan runs on a fresh thread and reports.
    writeFileSync(`${listing}.new`, addrListing(10, validAddress));
    renameSync(`${listing}.new`, listing);
    await a.scans(1);
    t.equal((await a.get("/report")).status, 200, "the next good scan's report is served");
    t.equal(cg.oomKills(), 0, "and still no OOM kill");
  },
);
