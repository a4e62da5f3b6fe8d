// What the ipvs-connections probe costs a scan: readIpvsConnTable over an ip_vs_conn of N connections
// (lines in the format of test/fixtures/ipvs/conn/live, recorded from a 6.1 guest), against a plain
// read of the same bytes (the floor any reader pays). The file is a regular file, so the kernel's own
// cost of printing the table (ip_vs_conn_seq_show, paid on every read of /proc) is not in these
// figures: on a node, add `time cat /proc/net/ip_vs_conn > /dev/null`. Prints one JSON line per size;
// maxRssMiB is the process's peak so far, so give one size per run for each size's own peak.
//   node dist/bench/node/ipvs-conn-read.js [N ...]     (default: 100000 1000000 2500000)
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readIpvsConnTable } from "../../agent/io/ipvs-conn-table.js";

const HEADER = "Pro FromIP   FPrt ToIP     TPrt DestIP   DPrt State       Expires PEName PEData\n";
const hex = (n: number, w: number) => n.toString(16).toUpperCase().padStart(w, "0");

/** N connections from 5,000 clients to 2,000 ClusterIPs on port 80, 80% ESTABLISHED; written in chunks, so
 * the peak RSS printed is the read's, not the generator's. */
function writeTable(path: string, n: number): void {
  const fd = openSync(path, "w");
  let chunk = [HEADER];
  for (let i = 0; i < n; i++) {
    const client = hex(0xac120000 + (i % 5000), 8);
    const vip = hex(0x0a600000 + (i % 2000), 8);
    const state = i % 5 === 0 ? "TIME_WAIT  " : "ESTABLISHED";
    chunk.push(`TCP ${client} ${hex(1024 + (i % 60000), 4)} ${vip} 0050 ${client} 1F90 ${state}     898\n`);
    if (chunk.length === 10_000) {
      writeSync(fd, chunk.join(""));
      chunk = [];
    }
  }
  writeSync(fd, chunk.join(""));
  closeSync(fd);
}

async function floor(path: string): Promise<void> {
  const fh = await open(path);
  const buf = Buffer.alloc(256 * 1024);
  while ((await fh.read(buf, 0, buf.length, null)).bytesRead > 0);
  await fh.close();
}

const sizes = process.argv.slice(2).map(Number);
const dir = mkdtempSync(join(tmpdir(), "proxyscope-ipvs-conn-bench-"));
try {
  for (const n of sizes.length > 0 ? sizes : [100_000, 1_000_000, 2_500_000]) {
    mkdirSync(join(dir, "net"), { recursive: true });
    const path = join(dir, "net", "ip_vs_conn");
    writeTable(path, n);
    const bytes = statSync(path).size;
    const runs: { floorMs: number; probeMs: number; cpuMs: number }[] = [];
    for (let k = 0; k < 3; k++) {
      let t = performance.now();
      await floor(path);
      const floorMs = performance.now() - t;
      const cpu = process.cpuUsage();
      t = performance.now();
      const r = await readIpvsConnTable(dir);
      const probeMs = performance.now() - t;
      const c = process.cpuUsage(cpu);
      if (!r.ok || r.facts.entries !== n) throw new Error(`read failed: ${JSON.stringify(r).slice(0, 300)}`);
      runs.push({ floorMs, probeMs, cpuMs: (c.user + c.system) / 1000 });
    }
    const med = (k: keyof (typeof runs)[0]) => Math.round(runs.map((r) => r[k]).sort((a, b) => a - b)[1]!);
    console.log(
      JSON.stringify({
        connections: n,
        mib: +(bytes / 2 ** 20).toFixed(1),
        floorMs: med("floorMs"),
        probeMs: med("probeMs"),
        probeCpuMs: med("cpuMs"),
        maxRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
      }),
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
