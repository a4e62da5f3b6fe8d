// `npm run bench`: every benchmark, one command. Writes bench/results/<stamp>.json, latest.json and
// latest.md (the table for the README). Phases can be picked: `npm run bench -- --only ipvs,nft,fleet`.
//   ipvs   one User-Mode Linux boot: ipvs-mode state grown to N = 100, 1,000, 10,000 Services x 10
//          endpoints; at each N: scans, the raw floor, node_exporter's ipvs collector, serving under
//          load, RSS over consecutive scans.
//   nft    a network namespace on the host per N: kube-proxy's nftables table; the same measures,
//          with `nft -j list table ip kube-proxy` (what a user would run instead) as the baseline.
//   fleet  the collector over 1,000 and 5,000 agents on loopback, and over a real Prometheus.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { runFleet } from "./fleet.js";
import { ipsetEntries, IPVS_IPSET_HEADER, ipvsadmRestore, kubeIpvs0Batch, services } from "./lib/gen.js";
import { BenchNetns } from "./lib/netns.js";
import { bootUmlBench } from "./lib/uml.js";
import { renderMarkdown } from "./report.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, "");
const DIST = `${REPO}/dist`;
const RESULTS = `${REPO}/bench/results`;
const ENDPOINTS = 10;
const log = (m: string) => process.stderr.write(`[bench] ${m}\n`);

export interface Plan {
  sizes: number[];
  /** Repetitions per size (fewer at 10,000: a scan there takes seconds, node_exporter ~10 s). */
  reps: Record<number, number>;
  baselineReps: Record<number, number>;
  loadS: number;
  /** Consecutive scans for the RSS run, per size (1,000 at the smallest, fewer where a scan is slow). */
  rssScans: Record<number, number>;
  fleetSizes: number[];
}

const FULL: Plan = {
  sizes: [100, 1000, 10000],
  reps: { 100: 5, 1000: 5, 10000: 3 },
  baselineReps: { 100: 5, 1000: 5, 10000: 2 },
  loadS: 20,
  rssScans: { 100: 30, 1000: 0, 10000: 10 },
  fleetSizes: [1000, 5000],
};
const QUICK: Plan = {
  sizes: [100],
  reps: { 100: 2 },
  baselineReps: { 100: 2 },
  loadS: 4,
  rssScans: { 100: 20 },
  fleetSizes: [200],
};

export function machine() {
  const cpu = cpus();
  const os = spawnSync("uname", ["-sr"], { encoding: "utf8" }).stdout.trim();
  return {
    date: new Date().toISOString(),
    nproc: cpu.length,
    cpuModel: cpu[0]?.model ?? "unknown",
    memoryGb: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    kernel: os,
    node: process.version,
  };
}

/** The report and /metrics the node benchmark recorded: the fleet benchmark serves them. */
function keepSamples(file: string, label: string): void {
  for (const ext of ["report.json", "metrics.txt"]) {
    if (existsSync(`${file}.${ext}`))
      spawnSync("cp", [`${file}.${ext}`, `${RESULTS}/samples/${label}.${ext}`]);
  }
}

async function ipvsPhase(plan: Plan, rssAt100: number): Promise<Record<string, unknown>> {
  const work = mkdtempSync("/var/tmp/proxyscope-bench-");
  try {
    writeFileSync(`${work}/ipset-header`, IPVS_IPSET_HEADER + "\n");
    let prev = 0;
    const steps: string[] = [];
    for (const n of plan.sizes) {
      const svcs = services(prev, n, ENDPOINTS);
      writeFileSync(`${work}/ipvs-${n}.txt`, ipvsadmRestore(svcs));
      writeFileSync(`${work}/addr-${n}.txt`, kubeIpvs0Batch(svcs));
      writeFileSync(`${work}/ipset-${n}.txt`, ipsetEntries(svcs));
      const rss = n === plan.sizes[0] ? Math.max(rssAt100, plan.rssScans[n] ?? 0) : (plan.rssScans[n] ?? 0);
      steps.push(`
t0=$(date +%s)
ipvsadm -R < "$W/ipvs-${n}.txt"
ip -batch "$W/addr-${n}.txt"
ipset restore < "$W/ipset-${n}.txt"
echo "state for N=${n} built in $(( $(date +%s) - t0 )) s: $(grep -c '^TCP\\|^UDP' /proc/net/ip_vs) virtual servers, $(grep -c '^  ->' /proc/net/ip_vs) real servers"
node ${DIST}/bench/node/node-bench.js --out "$W/ipvs-${n}.json" --label ipvs-${n} --reps ${plan.reps[n]} \\
  --baseline-reps ${plan.baselineReps[n]} --node-exporter --load-s ${plan.loadS} --rss-scans ${rss} \\
  --baseline "cat /proc/net/ip_vs" --baseline "ipvsadm -L -n" ${n === 10000 ? `--profile "$W/prof-ipvs-${n}"` : ""}
`);
      prev = n;
    }
    const script = `set -eu
W=${work}
ip link add kube-ipvs0 type dummy
ip link add eth0 type dummy && ip addr add 172.18.0.10/16 dev eth0 && ip link set eth0 up
ipset restore < "$W/ipset-header"
iptables-legacy-restore --noflush < ${REPO}/test/fixtures/netfilter/sources/kubelet.rules
iptables-legacy-restore --noflush < ${REPO}/test/fixtures/netfilter/sources/kube-proxy-ipvs-mode.rules
${steps.join("")}`;
    const mods = [
      "ipv6",
      "dummy",
      "ip_vs",
      "ip_vs_rr",
      "nf_tables",
      "ip_set",
      "ip_set_hash_ip",
      "ip_set_hash_ipport",
      "ip_set_hash_ipportip",
      "ip_set_hash_ipportnet",
      "ip_set_hash_net",
      "ip_set_bitmap_port",
      "xt_set",
      "nf_conntrack",
      "ip_tables",
      "iptable_nat",
      "iptable_filter",
      "iptable_mangle",
      "ip6_tables",
      "ip6table_filter",
      "ip6table_nat",
      "xt_comment",
      "xt_mark",
      "xt_conntrack",
      "xt_addrtype",
      "xt_MASQUERADE",
      "xt_nat",
      "xt_physdev",
      "ipt_REJECT",
      "ip6t_REJECT",
      "xt_tcpudp",
      "xt_multiport",
    ];
    log(`ipvs: one UML boot (${plan.sizes.join(", ")} Services x ${ENDPOINTS}); work dir ${work}`);
    const boot = await bootUmlBench({
      repoRoot: REPO,
      workDir: work,
      script,
      memMb: 3072,
      timeoutMs: 40 * 60_000,
      modules: mods,
      consoleLog: `${work}/console.log`,
    });
    log(`ipvs: guest finished rc=${boot.exitCode} in ${(boot.durationMs / 1000).toFixed(0)} s`);
    const out: Record<string, unknown> = { bootMs: boot.durationMs, exitCode: boot.exitCode };
    for (const n of plan.sizes) {
      const f = `${work}/ipvs-${n}.json`;
      if (existsSync(f)) out[n] = JSON.parse(readFileSync(f, "utf8"));
      keepSamples(f, `ipvs-${n}`);
    }
    const prof = `${work}/prof-ipvs-10000`;
    if (existsSync(prof)) {
      mkdirSync(`${RESULTS}/profiles`, { recursive: true });
      spawnSync("cp", ["-r", prof, `${RESULTS}/profiles/`]);
    }
    return out;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function nftPhase(plan: Plan, rssAt100: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const n of plan.sizes) {
    const ns = BenchNetns.create(`pxbench-nft-${n}`);
    try {
      const load = ns.loadNftablesMode(n, ENDPOINTS, REPO);
      log(`nft: N=${n} loaded in ${(load.ms / 1000).toFixed(1)} s`);
      const file = `/var/tmp/pxbench-nft-${n}.json`;
      const rss = n === plan.sizes[0] ? Math.max(rssAt100, plan.rssScans[n] ?? 0) : (plan.rssScans[n] ?? 0);
      const args = [
        `${DIST}/bench/node/node-bench.js`,
        "--out",
        file,
        "--label",
        `nft-${n}`,
        "--reps",
        String(plan.reps[n]),
        "--baseline-reps",
        String(plan.baselineReps[n]),
        "--load-s",
        String(plan.loadS),
        "--rss-scans",
        String(rss),
        "--baseline",
        "nft -j list table ip kube-proxy",
        "--baseline",
        "nft list table ip kube-proxy",
        ...(n === 10000 ? ["--profile", `${RESULTS}/profiles/prof-nft-${n}`] : []),
      ];
      const r = spawnSync("ip", ["netns", "exec", ns.name, process.execPath, ...args], {
        stdio: ["ignore", "inherit", "inherit"],
      });
      if (r.status !== 0) log(`nft: N=${n} node-bench exited ${r.status}`);
      if (existsSync(file)) {
        out[n] = { ...JSON.parse(readFileSync(file, "utf8")), loadMs: load.ms };
        keepSamples(file, `nft-${n}`);
        rmSync(file);
      }
    } finally {
      ns.destroy();
    }
  }
  return out;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      only: { type: "string", default: "ipvs,nft,fleet" },
      quick: { type: "boolean", default: false },
      "rss-scans": { type: "string", default: "1000" },
    },
  });
  const plan = values.quick ? QUICK : FULL;
  const only = new Set(values.only!.split(","));
  mkdirSync(`${RESULTS}/profiles`, { recursive: true });
  mkdirSync(`${RESULTS}/samples`, { recursive: true });
  const started = performance.now();
  const results: Record<string, unknown> = { machine: machine(), plan, endpointsPerService: ENDPOINTS };
  const stamp = (results.machine as { date: string }).date.replace(/[:.]/g, "-");
  const save = () => {
    writeFileSync(`${RESULTS}/${stamp}.json`, JSON.stringify(results, null, 1));
    writeFileSync(`${RESULTS}/latest.json`, JSON.stringify(results, null, 1));
    writeFileSync(`${RESULTS}/latest.md`, renderMarkdown(results));
  };
  // The 1,000-scan RSS run goes where a scan is cheapest: nftables mode at N = 100 on the host.
  const rss = values.quick ? 20 : Number(values["rss-scans"]);
  if (only.has("nft")) {
    results.nft = nftPhase(plan, rss);
    save();
  }
  if (only.has("ipvs")) {
    results.ipvs = await ipvsPhase(plan, only.has("nft") ? 0 : rss);
    save();
  }
  if (only.has("fleet")) {
    results.fleet = await runFleet(plan.fleetSizes, REPO);
    save();
  }
  results.totalS = (performance.now() - started) / 1000;
  save();
  log(`done in ${((performance.now() - started) / 60000).toFixed(1)} min: ${RESULTS}/latest.md`);
}

main().catch((e: unknown) => {
  process.stderr.write(`bench: ${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = 1;
});
