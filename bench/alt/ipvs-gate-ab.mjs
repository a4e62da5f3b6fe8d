// The ipvs-mode gate, measured: the built agent in `serve` inside a network namespace holding an
// ipvs-mode node's state at scale that this host's kernel can hold (kube-ipvs0 with N Service IPs,
// KUBE-CLUSTER-IP with N members, KUBE-NODE-PORT-TCP with N/10 ports; no IPVS module here, so
// /proc/net/ip_vs and ip_vs_conn are absent and not part of the figure), the kube-proxy STAND-IN
// answering ipvs mode with nothing pending. Runs the agent once per configuration, one after the
// other, and prints per run: RSS (VmRSS, RssAnon, RssFile) after each scan, the agent's CPU per scan
// (its own, and its waited-for tools'), and the load average. Needs `npm run build` first.
// Usage: node bench/alt/ipvs-gate-ab.mjs [--n 10000] [--scans 30] [--interval-s 2] [--out FILE] [--mem]
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { setTimeout } from "node:timers";
import { URL } from "node:url";

const REPO = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? dflt : process.argv[i + 1];
};
const N = Number(arg("n", "10000"));
const SCANS = Number(arg("scans", "30"));
const INTERVAL = arg("interval-s", "2");
const OUT = arg("out", null);
// With --mem, each isolate's own heap too (bench/node/mem-preload.ts, built into dist/), and only the
// gated run: whose memory the steady RSS is.
const MEM = process.argv.includes("--mem");
const NS = `pxgate-${process.pid}`;
const log = (m) => process.stderr.write(`[ipvs-gate-ab] ${m}\n`);
const loadavg = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const TICK = 100; // USER_HZ

const CONFIGS = [
  { label: "gated (defaults: full read every 3600 s, ip_vs_conn every 300 s)", args: [] },
  {
    label: "every scan reads everything (--full-read-interval-s 0 --ipvs-conn-interval-s 0)",
    args: ["--full-read-interval-s", "0", "--ipvs-conn-interval-s", "0"],
  },
];

function buildNs() {
  execFileSync("ip", ["netns", "add", NS]);
  const ns = (argv, input) => execFileSync("ip", ["netns", "exec", NS, ...argv], { input });
  ns(["ip", "link", "set", "lo", "up"]);
  ns(["ip", "link", "add", "kube-ipvs0", "type", "veth", "peer", "name", "kipvs-peer"]);
  const ip = (i) => `10.${96 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
  let batch = "";
  for (let i = 1; i <= N; i++) batch += `addr add ${ip(i)}/32 dev kube-ipvs0\n`;
  ns(["ip", "-batch", "-"], batch);
  let sets = "create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 65536\n";
  sets += "create KUBE-NODE-PORT-TCP bitmap:port range 0-65535\n";
  for (let i = 1; i <= N; i++) sets += `add KUBE-CLUSTER-IP ${ip(i)},tcp:80\n`;
  for (let i = 0; i < N / 10; i++) sets += `add KUBE-NODE-PORT-TCP ${30000 + (i % 2768)}\n`;
  ns(["ipset", "restore", "-exist"], sets);
}

const memFile = (cfg) => join(tmpdir(), `ipvs-gate-ab-${process.pid}-${CONFIGS.indexOf(cfg)}.jsonl`);

function status(pid) {
  const out = {};
  for (const m of readFileSync(`/proc/${pid}/status`, "utf8").matchAll(/^(\w+):\s+(\d+) kB/gm))
    out[m[1]] = Number(m[2]) / 1024;
  return out;
}
function cpu(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return { own: (Number(f[11]) + Number(f[12])) / TICK, tools: (Number(f[13]) + Number(f[14])) / TICK };
}
async function standin() {
  const dir = mkdtempSync(join(tmpdir(), "ipvs-gate-ab-"));
  const file = join(dir, "scenario.json");
  writeFileSync(
    file,
    JSON.stringify({
      mode: "ipvs",
      version: "v1.34.1",
      metricsAddress: "127.0.0.1:0",
      healthAddress: "127.0.0.1:0",
      lastSync: { agoSeconds: 3 },
      lastQueued: { unix: Math.floor(Date.now() / 1000) - 600 },
    }),
  );
  const child = spawn(
    "ip",
    ["netns", "exec", NS, process.execPath, `${REPO}/dist/test/standins/kube-proxy.js`, file],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const ports = await new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const m = /ready (\d+) (\d+)/.exec(out);
      if (m) resolve([m[1], m[2]]);
    });
    child.once("exit", (c) => reject(new Error(`stand-in exited ${c}`)));
  });
  return { ports, stop: () => (child.kill("SIGTERM"), rmSync(dir, { recursive: true, force: true })) };
}

async function run(cfg, kp, port) {
  const agent = spawn(
    "ip",
    [
      "netns",
      "exec",
      NS,
      process.execPath,
      ...(MEM ? ["--import", `${REPO}/dist/bench/node/mem-preload.js`] : []),
      `${REPO}/dist/agent/cli.js`,
      "serve",
      "--listen",
      "127.0.0.1",
      "--port",
      String(port),
      "--node",
      "bench",
      "--scan-interval-s",
      INTERVAL,
      "--kube-proxy-metrics-url",
      `http://127.0.0.1:${kp.ports[0]}`,
      "--kube-proxy-health-url",
      `http://127.0.0.1:${kp.ports[1]}`,
      "--log-level",
      "warn",
      ...cfg.args,
    ],
    {
      stdio: ["ignore", "ignore", "inherit"],
      env: MEM ? { ...process.env, PXBENCH_MEM_OUT: memFile(cfg) } : process.env,
    },
  );
  const pid = agent.pid;
  const load0 = loadavg();
  const samples = [];
  let last = 0;
  let prev = null;
  const metricsUrl = `http://127.0.0.1:${port}/metrics`;
  const scrape = () =>
    execFileSync("ip", ["netns", "exec", NS, "curl", "-s", metricsUrl], { encoding: "utf8" });
  while (samples.length < SCANS) {
    await sleep(250);
    let text = "";
    try {
      text = scrape();
    } catch {
      continue;
    }
    const m = /^proxyscope_scans_total(?:\{[^}]*\})? (\d+)/m.exec(text);
    const n = m ? Number(m[1]) : 0;
    if (n <= last) continue;
    last = n;
    const c = cpu(pid);
    const s = status(pid);
    samples.push({
      scan: n,
      at: Date.now(),
      vmRss: s.VmRSS,
      rssAnon: s.RssAnon,
      rssFile: s.RssFile,
      cpuOwnS: prev ? c.own - prev.own : null,
      cpuToolsS: prev ? c.tools - prev.tools : null,
    });
    prev = c;
  }
  const load1 = loadavg();
  agent.kill("SIGTERM");
  await new Promise((r) => agent.once("exit", r));
  const tail = samples.slice(-Math.max(3, Math.floor(SCANS / 3)));
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const perScan = samples.slice(1);
  const heaps = {};
  if (MEM) {
    // Each isolate's heap over the same last third of the run.
    const since = samples[samples.length - tail.length]?.at ?? 0;
    const lines = readFileSync(memFile(cfg), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    for (const th of new Set(lines.map((l) => (l.thread === "main" ? "main" : "worker")))) {
      const mine = lines.filter((l) => l.t >= since && (l.thread === "main") === (th === "main"));
      heaps[th] = {
        heapTotalMb: med(mine.map((l) => l.heapTotal)),
        heapUsedMb: med(mine.map((l) => l.heapUsed)),
        externalMb: med(mine.map((l) => l.external)),
        mallocedMb: med(mine.map((l) => l.mallocedMb)),
      };
    }
    rmSync(memFile(cfg), { force: true });
  }
  const summary = {
    heaps,
    label: cfg.label,
    load: `${load0} -> ${load1}`,
    steadyVmRssMb: med(tail.map((x) => x.vmRss)),
    steadyRssAnonMb: med(tail.map((x) => x.rssAnon)),
    rssFileMb: med(tail.map((x) => x.rssFile)),
    maxVmRssMb: Math.max(...samples.map((x) => x.vmRss)),
    cpuOwnMsPerScan: Math.round((1000 * perScan.reduce((a, x) => a + x.cpuOwnS, 0)) / perScan.length),
    cpuToolsMsPerScan: Math.round((1000 * perScan.reduce((a, x) => a + x.cpuToolsS, 0)) / perScan.length),
  };
  log(JSON.stringify(summary));
  return { summary, samples };
}

buildNs();
const kp = await standin();
const results = [];
try {
  for (const [i, cfg] of CONFIGS.entries()) if (!MEM || i === 0) results.push(await run(cfg, kp, 19_990 + i));
} finally {
  kp.stop();
  execFileSync("ip", ["netns", "del", NS]);
}
const doc = { n: N, scans: SCANS, intervalS: Number(INTERVAL), node: process.version, results };
if (OUT) writeFileSync(OUT, JSON.stringify(doc, null, 1));
process.stdout.write(
  `${JSON.stringify(
    results.map((r) => r.summary),
    null,
    1,
  )}\n`,
);
