// Soak: the agent's scan path (scanNode through the real ToolRunner, files and HTTP, recorded into
// the same AgentState and fastify app the agent serves, /report and /metrics read after every scan)
// run back to back for an hour's worth of 1 s scans, on a synthetic 1,000-Service ipvs-mode node,
// with a probe fault every few scans (a tool that hangs, prints garbage, is missing, or floods;
// kube-proxy refusing). Memory and open file descriptors are sampled as it goes; the claim is that
// both stay flat. Not part of the test suite. How to run it: USAGE, which --help prints.
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ToolRunner } from "../agent/io/run.js";
import { AgentMetrics } from "../agent/metrics/agent-metrics.js";
import { buildApp } from "../agent/server/app.js";
import { procIpvsLookup } from "../agent/server/ipvs-lookup.js";
import { AgentState } from "../agent/server/state.js";
import { renderScan } from "../agent/server/rendered-scan.js";
import { scanNode } from "../agent/scan.js";
import { benchArgs, count } from "./lib/args.js";

const USAGE = `\
Usage: npm run bench:soak -- [--scans 3600] [--fault-every 7] [--out bench/results/soak.md]
       (node --expose-gc dist/bench/soak.js [flags]; build first: npx tsc -p .)
The agent's scan path back to back on a synthetic 1,000-Service ipvs-mode node, with a probe fault
every few scans; heap, RSS and open file descriptors sampled as it goes. The markdown goes to --out
and stdout.
  --scans N         scans back to back (3600: an hour of 1 s scans)
  --fault-every K   every Kth scan meets a fault, in turn: a tool that hangs, prints garbage, is
                    missing or floods; kube-proxy refusing`;

const REPO = new URL("../../", import.meta.url).pathname;
const FIX = join(REPO, "test/fixtures");
const SERVICES = 1000;

const hex = (n: number, w: number) => n.toString(16).toUpperCase().padStart(w, "0");

function node(dir: string): { root: string; tools: string; faulty: Record<string, string> } {
  const root = join(dir, "root");
  const put = (rel: string, text: string) => {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  };
  put("host/etc/os-release", readFileSync(join(FIX, "os-release/debian-12/etc/os-release"), "utf8"));
  put("host/var/lib/dpkg/status", readFileSync(join(FIX, "host/var/lib/dpkg/status"), "utf8"));
  put("proc/sys/kernel/osrelease", "6.1.176\n");
  put("proc/modules", readFileSync(join(FIX, "uml-6.1/proc/modules"), "utf8"));
  for (const k of ["net/ipv4/ip_forward", "net/ipv4/conf/all/arp_ignore", "net/ipv4/vs/conntrack"])
    put(`proc/sys/${k}`, "1\n");
  mkdirSync(join(root, "sys/module/ip_set"), { recursive: true });
  // 1,000 Services with 3 endpoints each, in /proc/net/ip_vs and on kube-ipvs0.
  const ipvs = [
    "IP Virtual Server version 1.2.1 (size=4096)",
    "Prot LocalAddress:Port Scheduler Flags",
    "  -> RemoteAddress:Port Forward Weight ActiveConn InActConn",
  ];
  const addrs: object[] = [];
  for (let i = 0; i < SERVICES; i++) {
    const ip = 0x0a600000 + i + 1;
    ipvs.push(`TCP  ${hex(ip, 8)}:0050 rr  `);
    for (let e = 0; e < 3; e++)
      ipvs.push(`  -> ${hex(0x0af40000 + i * 4 + e, 8)}:1F90      Masq    1      0          0         `);
    addrs.push({
      family: "inet",
      local: `10.96.${(ip >> 8) & 255}.${ip & 255}`,
      prefixlen: 32,
      scope: "global",
    });
  }
  put("proc/net/ip_vs", `${ipvs.join("\n")}\n`);
  const kubeIpvs0 = JSON.stringify([
    {
      ifindex: 3,
      ifname: "kube-ipvs0",
      flags: ["BROADCAST", "NOARP"],
      operstate: "DOWN",
      linkinfo: { info_kind: "dummy" },
      addr_info: addrs,
    },
  ]);
  const data = join(dir, "data");
  mkdirSync(data);
  const file = (name: string, text: string) => {
    writeFileSync(join(data, name), text);
    return join(data, name);
  };
  const nf = join(FIX, "netfilter/recorded/nftables-ipvs-leftovers");
  const answers: Record<string, Record<string, string>> = {
    ip: {
      "-j -d addr show": join(FIX, "tools/ip/addr-show-two-veths.json"),
      "-j route show default": join(FIX, "tools/ip/route-default-v4.json"),
      "-j -6 route show default": join(FIX, "tools/ip/route-default-v6.json"),
      "-j -d addr show dev kube-ipvs0": file("kube-ipvs0.json", kubeIpvs0),
    },
    nft: {
      "-j list tables": join(nf, "nft-list-tables.json"),
      "-j list chains": join(nf, "nft-list-chains.json"),
      "-j list sets ip": join(nf, "nft-list-sets-ip.json"),
      "-j list maps ip": join(nf, "nft-list-maps-ip.json"),
    },
    ipset: { "list -terse": join(FIX, "ipvs/ipsets/kube/ipset-list-terse.txt") },
    ipvsadm: { "-L --timeout": join(FIX, "ipvs/kube-small/ipvsadm-L-timeout.txt") },
    "iptables-legacy-save": { "-c": join(nf, "iptables-legacy-save.txt") },
    "ip6tables-legacy-save": { "-c": join(nf, "ip6tables-legacy-save.txt") },
    "iptables-nft-save": { "-c": join(nf, "iptables-nft-save.txt") },
    "ip6tables-nft-save": { "-c": join(nf, "ip6tables-nft-save.txt") },
  };
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const writeTools = (to: string, override: Record<string, string | null>) => {
    mkdirSync(to);
    for (const [tool, byArgs] of Object.entries(answers)) {
      const o = override[tool];
      if (o === null) continue;
      const body =
        o ??
        [
          'case "$*" in',
          ...Object.entries(byArgs).map(([a, f]) => `  ${q(a)}) exec /bin/cat ${q(f)} ;;`),
          "  *) exit 99 ;;",
          "esac",
        ].join("\n");
      writeFileSync(join(to, tool), `#!/bin/sh\n${body}\n`);
      chmodSync(join(to, tool), 0o755);
    }
  };
  const tools = join(dir, "tools");
  writeTools(tools, {});
  const faulty: Record<string, string> = {};
  const faults: Record<string, Record<string, string | null>> = {
    "nft hangs": { nft: "exec /bin/sleep 30" },
    "ip prints garbage": { ip: "echo '<html>garbage'" },
    "ipset missing": { ipset: null },
    "iptables-nft-save floods": { "iptables-nft-save": "exec /usr/bin/yes '-A KUBE-FLOOD -j ACCEPT'" },
    "ipvsadm not permitted": { ipvsadm: "echo 'Operation not permitted' >&2; exit 1" },
  };
  for (const [name, o] of Object.entries(faults)) {
    const to = join(dir, `tools-${name.replace(/\W+/g, "-")}`);
    writeTools(to, o);
    faulty[name] = to;
  }
  return { root, tools, faulty };
}

/** A minimal kube-proxy: /proxyMode, /configz and /metrics from a recording, /healthz. */
async function kubeProxy(): Promise<{ url: string; server: Server }> {
  const rec = join(FIX, "kube-proxy/recorded/ipvs-v1.31");
  const bodies: Record<string, string> = {
    "/proxyMode": readFileSync(join(rec, "proxyMode"), "utf8"),
    "/configz": readFileSync(join(rec, "configz.json"), "utf8"),
    "/metrics": readFileSync(join(rec, "metrics.txt"), "utf8"),
    "/healthz": readFileSync(join(rec, "healthz.json"), "utf8"),
  };
  const server = createServer((req, res) => {
    const b = bodies[req.url ?? ""];
    res.writeHead(b === undefined ? 404 : 200).end(b ?? "");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const a = server.address();
  return { url: `http://127.0.0.1:${typeof a === "object" && a ? a.port : 0}`, server };
}

const fds = () => readdirSync("/proc/self/fd").length;

async function main() {
  const { values } = benchArgs(USAGE, {
    options: {
      scans: { type: "string", default: "3600" },
      "fault-every": { type: "string", default: "7" },
      out: { type: "string", default: join(REPO, "bench/results/soak.md") },
    },
  });
  const scans = count(values.scans, "--scans");
  const faultEvery = count(values["fault-every"], "--fault-every");
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-soak-"));
  const n = node(dir);
  const kp = await kubeProxy();
  const refused = "http://127.0.0.1:1";
  const state = new AgentState(new AgentMetrics({ version: "soak", processMetrics: true }));
  const app = buildApp(state, { lookupVirtualServer: procIpvsLookup(join(n.root, "proc")) });
  const faultNames = [...Object.keys(n.faulty), "kube-proxy refused"];
  const samples: { scan: number; heapMB: number; rssMB: number; fds: number; ms: number }[] = [];
  const failures = new Map<string, number>();
  const started = performance.now();
  let scanMsTotal = 0;
  for (let i = 1; i <= scans; i++) {
    const fault = i % faultEvery === 0 ? faultNames[(i / faultEvery) % faultNames.length]! : null;
    const toolDir = fault !== null && fault in n.faulty ? n.faulty[fault]! : n.tools;
    const kpUrl = fault === "kube-proxy refused" ? refused : kp.url;
    const t0 = performance.now();
    const report = await scanNode({
      node: "soak",
      agentVersion: "soak",
      hostRoot: join(n.root, "host"),
      procRoot: join(n.root, "proc"),
      sysRoot: join(n.root, "sys"),
      tools: new ToolRunner([toolDir]),
      kubeProxyMetricsUrl: kpUrl,
      kubeProxyHealthUrl: kpUrl,
      nodeIPs: [],
      callTimeoutMs: 500,
      probeTimeoutMs: 5000,
    });
    scanMsTotal += performance.now() - t0;
    state.record(await renderScan(report));
    for (const p of report.probes)
      if (!p.ok)
        failures.set(`${p.name}: ${p.error?.kind}`, (failures.get(`${p.name}: ${p.error?.kind}`) ?? 0) + 1);
    const r = await app.inject({ method: "GET", url: "/report" });
    const m = await app.inject({ method: "GET", url: "/metrics" });
    if (r.statusCode !== 200 || m.statusCode !== 200)
      throw new Error(`scan ${i}: /report ${r.statusCode} /metrics ${m.statusCode}`);
    if (i % 50 === 0 || i === 1) {
      if (global.gc) global.gc();
      const mem = process.memoryUsage();
      samples.push({
        scan: i,
        heapMB: mem.heapUsed / 2 ** 20,
        rssMB: mem.rss / 2 ** 20,
        fds: fds(),
        ms: performance.now() - t0,
      });
      process.stderr.write(
        `scan ${i}: heap ${samples.at(-1)!.heapMB.toFixed(1)} MB rss ${samples.at(-1)!.rssMB.toFixed(1)} MB fds ${samples.at(-1)!.fds}\n`,
      );
    }
  }
  const wallS = (performance.now() - started) / 1000;
  await app.close();
  kp.server.close();
  rmSync(dir, { recursive: true, force: true });

  const tenth = Math.max(1, Math.floor(samples.length / 10));
  const avg = (xs: typeof samples, k: "heapMB" | "rssMB" | "fds") =>
    xs.reduce((a, s) => a + s[k], 0) / xs.length;
  const early = samples.slice(1, 1 + tenth);
  const late = samples.slice(-tenth);
  const row = (k: "heapMB" | "rssMB" | "fds", unit: string) =>
    `| ${k} | ${avg(early, k).toFixed(1)} ${unit} | ${avg(late, k).toFixed(1)} ${unit} | ${Math.max(...samples.map((s) => s[k])).toFixed(1)} ${unit} |`;
  const md = [
    `# Soak: agent scan path, ${scans} scans${scans >= 3600 ? " (an hour of 1 s scans, compressed)" : ""}`,
    "",
    `Run: ${new Date().toISOString()}, node ${process.version}, ${scans} scans back to back${scans >= 3600 ? " (an hour of 1 s scans, compressed)" : ` (short run; an hour of 1 s scans is 3600)`},`,
    `${SERVICES} IPVS Services × 3 endpoints, a fault every ${faultEvery} scans rotating through: ${faultNames.join(", ")}.`,
    `Wall time ${wallS.toFixed(0)} s, mean scan ${(scanMsTotal / scans).toFixed(0)} ms. /report and /metrics read after every scan.`,
    `Memory sampled after a forced GC (${global.gc ? "--expose-gc" : "no --expose-gc: heap figures include garbage"}) every 50 scans.`,
    "",
    "| measure | early (first tenth, after warm-up) | late (last tenth) | max |",
    "| --- | --- | --- | --- |",
    row("heapMB", "MB"),
    row("rssMB", "MB"),
    row("fds", ""),
    "",
    "Probe failures seen (probe: kind × scans):",
    "",
    ...[...failures.entries()].sort().map(([k, v]) => `- ${k} × ${v}`),
    "",
    "Samples (scan, heap MB, RSS MB, fds):",
    "",
    "```",
    ...samples.map((s) => `${s.scan}\t${s.heapMB.toFixed(1)}\t${s.rssMB.toFixed(1)}\t${s.fds}`),
    "```",
    "",
  ].join("\n");
  mkdirSync(dirname(values.out), { recursive: true });
  writeFileSync(values.out, md);
  process.stdout.write(md);
}

main().catch((e: unknown) => {
  process.stderr.write(`soak: ${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
