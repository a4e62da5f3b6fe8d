// The container's memory limit as the agent reads it (agent/io/cgroup-memory.ts) from cgroup layouts
// laid out under fake roots (test/fixtures/cgroup: one recorded on this host, the others written from
// the documented formats), and the scan thread's heap limit derived from it (scan-thread.ts).
import t from "tap";
import { fileURLToPath } from "node:url";
import { containerMemoryLimit } from "../../../agent/io/cgroup-memory.js";
import { memoryLimitFiles, parseMemoryLimit } from "../../../agent/parse/cgroup-memory.js";
import {
  MIN_SCAN_HEAP_MB,
  SCAN_THREAD_LIMITS,
  SERVING_RESERVE_MB,
  scanThreadLimits,
} from "../../../agent/server/scan-thread.js";

const MiB = 1024 * 1024;
const root = (name: string) => fileURLToPath(new URL(`../../fixtures/cgroup/${name}`, import.meta.url));

t.test("reads the limit the kernel enforces, in each layout", async (t) => {
  const cases: [string, number | null, RegExp][] = [
    ["k8s-v2-ns", 256 * MiB, /^\/sys\/fs\/cgroup\/memory\.max$/],
    ["k8s-v1", 256 * MiB, /^\/sys\/fs\/cgroup\/memory\/memory\.limit_in_bytes$/],
    ["v2-max", null, /no memory limit/],
    // The container's own cgroup says max; its pod's slice above it sets the limit, and a looser one above that.
    ["v2-nested", 512 * MiB, /kubepods-burstable-pod0c5e\.slice\/memory\.max$/],
    ["host-hybrid", null, /no memory limit/],
  ];
  for (const [name, bytes, from] of cases) {
    const got = await containerMemoryLimit(root(name));
    t.equal(got.bytes, bytes, `${name}: ${got.bytes}`);
    t.match(got.from, from, `${name}: ${got.from}`);
  }
});

t.test("an unreadable /proc/self/cgroup keeps the default, and says so", async (t) => {
  const got = await containerMemoryLimit(root("does-not-exist"));
  t.equal(got.bytes, null);
  t.match(got.from, /^not read: /);
});

t.test("the files: own cgroup first, then each ancestor up to the mount", async (t) => {
  const files = memoryLimitFiles(
    "0::/a/b\n",
    "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n",
  ).map((f) => f.path);
  t.same(files, [
    "/sys/fs/cgroup/a/b/memory.max",
    "/sys/fs/cgroup/a/memory.max",
    "/sys/fs/cgroup/memory.max",
  ]);
  // A mount path with a space, as mountinfo escapes it.
  const spaced = memoryLimitFiles("4:memory:/x\n", "35 31 0:32 / /c\\040g rw - cgroup cgroup rw,memory\n");
  t.same(
    spaced.map((f) => f.path),
    ["/c g/x/memory.limit_in_bytes", "/c g/memory.limit_in_bytes"],
  );
  t.same(memoryLimitFiles("4:memory:/x\n", ""), [], "no mount of that hierarchy: nothing to read");
});

t.test("limit values: max and v1's huge counter are no limit; garbage is refused", async (t) => {
  t.same(parseMemoryLimit("max\n", 2), { ok: true, value: null });
  t.same(parseMemoryLimit("268435456\n", 2), { ok: true, value: 268435456 });
  t.same(parseMemoryLimit("9223372036854771712\n", 1), { ok: true, value: null });
  t.same(parseMemoryLimit("268435456", 1), { ok: true, value: 268435456 });
  t.equal(parseMemoryLimit("lots", 2).ok, false);
});

t.test("the scan thread's heap: the container's limit less the serving side, within bounds", async (t) => {
  t.same(scanThreadLimits(null), SCAN_THREAD_LIMITS, "no limit: the defaults");
  const at = (mib: number) => scanThreadLimits(mib * MiB).maxOldGenerationSizeMb;
  t.equal(at(320), 320 - SERVING_RESERVE_MB, "the DaemonSet's 320Mi");
  t.ok(at(320)! + SERVING_RESERVE_MB <= 320, "thread and reserve fit in the limit");
  // The hourly full read of a 10,000-Service node peaks at 86-106 MB of scan-thread heap (bench/results).
  t.ok(at(320)! >= 120, "the DaemonSet's limit leaves a 10,000-Service scan room");
  t.equal(at(512), 512 - SERVING_RESERVE_MB);
  t.equal(at(8192), SCAN_THREAD_LIMITS.maxOldGenerationSizeMb, "never above the default");
  t.equal(at(128), MIN_SCAN_HEAP_MB, "never below the floor");
  t.equal(scanThreadLimits(256 * MiB).maxYoungGenerationSizeMb, SCAN_THREAD_LIMITS.maxYoungGenerationSizeMb);
});

t.test("a limit file not read is not 'no limit': the reason names it", async (t) => {
  const { mkdtemp, mkdir, writeFile, rm } = await import("node:fs/promises");
  const { tmpdir } = await import("node:os");
  const dir = await mkdtemp(`${tmpdir()}/cgroup-`);
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await mkdir(`${dir}/proc/self`, { recursive: true });
  await mkdir(`${dir}/sys/fs/cgroup`, { recursive: true });
  await writeFile(`${dir}/proc/self/cgroup`, "0::/\n");
  await writeFile(
    `${dir}/proc/self/mountinfo`,
    "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n",
  );
  await writeFile(`${dir}/sys/fs/cgroup/memory.max`, "lots\n");
  const got = await containerMemoryLimit(dir);
  t.equal(got.bytes, null, "no limit known");
  t.match(got.from, /^not read: .*memory\.max/, "said as not read, not as no limit set");
  t.notMatch(got.from, /no memory limit set/);
});
