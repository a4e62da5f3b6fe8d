// What one tool spawn costs the agent as its memory grows (spawn cost): Node's spawn forks
// the whole process (libuv uses fork(), not vfork or posix_spawn, on Linux), so the kernel copies its page
// tables. Spawns /bin/true 20 times at each resident size and prints CPU (user + sys of this process) and
// wall time per spawn. The baseline is the same spawns at the smallest size, in the same run.
//   node bench/alt/fork-cost.mjs [MB ...]      (default: 0 200 800)
import { spawnSync } from "node:child_process";
import { Buffer } from "node:buffer";
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import process from "node:process";

const sizes = process.argv.slice(2).map(Number);
const keep = [];
const rows = [];
for (const mb of sizes.length > 0 ? sizes : [0, 200, 800]) {
  while (keep.length < mb) keep.push(Buffer.alloc(1 << 20, 1)); // touched, so resident
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < 20; i++) spawnSync("/bin/true");
  const c = process.cpuUsage(c0);
  rows.push({
    rssMb: Math.round(process.memoryUsage().rss / 1e6),
    cpuMsPerSpawn: Number(((c.user + c.system) / 20 / 1000).toFixed(2)),
    wallMsPerSpawn: Number(((performance.now() - t0) / 20).toFixed(2)),
  });
}
const base = rows[0].cpuMsPerSpawn;
for (const r of rows) r.cpuVsSmallest = Number((r.cpuMsPerSpawn / base).toFixed(1));
process.stdout.write(`${JSON.stringify({ node: process.version, load: loadavg()[0], rows })}\n`);
