// The fault matrix, as one table: every probe's source (tool, file or kube-proxy endpoint) × every way
// it can fail. Each row runs a whole scan in-process (the same scanNode the agent's loop runs, through
// the real ToolRunner, real files and real HTTP to the kube-proxy stand-in), records it into the
// same AgentState and fastify app the agent serves, and asserts: the scan completes with a report
// that passes its schema, the server answers /healthz, /report and /metrics, the failure is named in
// /report (kind and command) and in proxyscope_probe_success, and every probe the fault does not touch
// is exactly as in the fault-free baseline. The real-process side (one agent, every fault at once) is
// test/e2e/agent-faults.test.ts.
//
// Tools are small /bin/sh scripts that print recorded output (PATH is only the tool dir, so they call
// /bin/cat and friends by absolute path). "Prints far more than the cap" runs `yes` forever against a
// cap lowered to 256 KiB for that row only (the probes' real caps go up to 512 MiB; reading that much
// would only make the test slow, the cap logic is the same).
import {
  chmodSync,
  closeSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
  constants,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { execFileSync } from "node:child_process";
import t, { type Test } from "tap";
import type { ProbeErrorKind } from "../../agent/facts/probe-error.js";
import { ToolRunner, type ExecOptions } from "../../agent/io/run.js";
import type { ToolName } from "../../agent/io/tools.js";
import { AgentMetrics } from "../../agent/metrics/agent-metrics.js";
import { renderScan } from "../../agent/server/rendered-scan.js";
import type { ProbeName } from "../../agent/probes/types.js";
import { NodeReport } from "../../agent/report/schema.js";
import { buildApp } from "../../agent/server/app.js";
import { procIpvsLookup } from "../../agent/server/ipvs-lookup.js";
import { AgentState } from "../../agent/server/state.js";
import { scanNode } from "../../agent/scan.js";
import { verifyChecks } from "../../agent/verify/checks.js";
import { startStandin, type RunningStandin } from "../helpers/standin.js";
import { PARITY_NFT_ANSWERS, snapshotOfRecording } from "../helpers/parity-snapshot.js";
import { agentBuilt, sample } from "./agent-process.js";

const FIX = new URL("../fixtures/", import.meta.url).pathname;
const NETFILTER = `${FIX}netfilter/recorded/nftables-ipvs-leftovers/`;
// Faults never answer at all (a hang, not a late answer), so a deadline only has to be longer than a
// healthy answer on a loaded machine: 1.5 s was missed at load 17, and at load 45 a whole probe took
// more than the agent's default 30 s. A minute per call costs only the hang rows.
const CALL_TIMEOUT_MS = 60_000;
const PROBE_TIMEOUT_MS = 120_000;
// ~100 rows, the hangs among them waiting out the 10 s deadline: longer than tap's default 600 s on
// a loaded machine.
t.setTimeout(1_800_000);

// --- the node: a host tree and a tool dir that answer every probe from recorded output ---

function hostTree(): string {
  const root = mkdtempSync(join(tmpdir(), "proxyscope-matrix-host-"));
  const put = (rel: string, from: string) => {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    cpSync(from, join(root, rel));
  };
  put("host/etc/os-release", `${FIX}os-release/debian-12/etc/os-release`);
  put("host/var/lib/dpkg/status", `${FIX}host/var/lib/dpkg/status`);
  put("host/etc/sysctl.d/k8s.conf", `${FIX}sysctl/kubeadm/etc/sysctl.d/k8s.conf`);
  put("host/lib/modules/6.1.176/modules.builtin", `${FIX}uml-6.1/lib/modules/6.1.176/modules.builtin`);
  put("host/lib/modules/6.1.176/modules.dep", `${FIX}uml-6.1/lib/modules/6.1.176/modules.dep`);
  put("proc/sys/kernel/osrelease", `${FIX}uml-6.1/proc/sys/kernel/osrelease`);
  put("proc/modules", `${FIX}uml-6.1/proc/modules`);
  put("proc/net/ip_vs", `${FIX}ipvs/kube-small/proc/net/ip_vs`);
  put("proc/net/ip_vs_conn", `${FIX}ipvs/conn/live/proc/net/ip_vs_conn`);
  put("proc/net/tcp", `${FIX}host-sockets/proc/net/tcp`);
  put("proc/net/tcp6", `${FIX}host-sockets/proc/net/tcp6`);
  // Legacy tables listed, so the probe runs the legacy tools and their faults are met (it skips them
  // when the kernel lists none).
  put("proc/net/ip_tables_names", `${FIX}proc-net-tables-names/proc/net/ip_tables_names`);
  put("proc/net/ip6_tables_names", `${FIX}proc-net-tables-names/proc/net/ip6_tables_names`);
  const sysctls: Record<string, string> = {
    "net/ipv4/conf/all/arp_ignore": "1",
    "net/ipv4/conf/all/arp_announce": "2",
    "net/ipv4/ip_forward": "1",
    "net/netfilter/nf_conntrack_tcp_be_liberal": "0",
    "net/ipv4/vs/conntrack": "1",
    "net/ipv6/conf/all/disable_ipv6": "0",
  };
  for (const [k, v] of Object.entries(sysctls)) {
    mkdirSync(dirname(join(root, "proc/sys", k)), { recursive: true });
    writeFileSync(join(root, "proc/sys", k), `${v}\n`);
  }
  mkdirSync(join(root, "sys/module/ip_set"), { recursive: true });
  return root;
}

const shq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** Recorded answers per tool, by exact argv. */
const ANSWERS: Record<string, Record<string, string>> = {
  ip: {
    "-j -d addr show": `${FIX}tools/ip/addr-show-two-veths.json`,
    "-j route show default": `${FIX}tools/ip/route-default-v4.json`,
    "-j -6 route show default": `${FIX}tools/ip/route-default-v6.json`,
    "-j -d addr show dev kube-ipvs0": `${FIX}ipvs/kube-ipvs0/present.json`,
    "-j -4 rule show": `${FIX}tools/ip/rule-show-v4.json`,
    "-j -6 rule show": `${FIX}tools/ip/rule-show-v6.json`,
  },
  nft: {
    "-j list tables": `${NETFILTER}nft-list-tables.json`,
    "-j list chains": `${NETFILTER}nft-list-chains.json`,
    "-j list sets ip": `${NETFILTER}nft-list-sets-ip.json`,
    "-j list maps ip": `${NETFILTER}nft-list-maps-ip.json`,
    // The probe's reads since they were cut down: terse declarations, then kube-proxy's named sets and maps one by one.
    "-j -t list sets": `${NETFILTER}nft-list-t-sets.json`,
    "-j -t list maps": `${NETFILTER}nft-list-t-maps.json`,
    "-j list set ip kube-proxy cluster-ips": `${NETFILTER}nft-list-set-ip-kube-proxy-cluster-ips.json`,
    "-j list set ip kube-proxy nodeport-ips": `${NETFILTER}nft-list-set-ip-kube-proxy-nodeport-ips.json`,
    "-j list map ip kube-proxy firewall-ips": `${NETFILTER}nft-list-map-ip-kube-proxy-firewall-ips.json`,
    "-j list map ip kube-proxy no-endpoint-nodeports": `${NETFILTER}nft-list-map-ip-kube-proxy-no-endpoint-nodeports.json`,
    "-j list map ip kube-proxy no-endpoint-services": `${NETFILTER}nft-list-map-ip-kube-proxy-no-endpoint-services.json`,
    "-j list map ip kube-proxy service-ips": `${NETFILTER}nft-list-map-ip-kube-proxy-service-ips.json`,
    "-j list map ip kube-proxy service-nodeports": `${NETFILTER}nft-list-map-ip-kube-proxy-service-nodeports.json`,
    // The parity probe's reads: each family's chains, then kube-proxy's four maps.
    ...PARITY_NFT_ANSWERS,
  },
  ipset: { "list -terse": `${FIX}ipvs/ipsets/kube/ipset-list-terse.txt` },
  ipvsadm: { "-L --timeout": `${FIX}ipvs/kube-small/ipvsadm-L-timeout.txt` },
  "iptables-legacy-save": { "-c": `${NETFILTER}iptables-legacy-save.txt` },
  "ip6tables-legacy-save": { "-c": `${NETFILTER}ip6tables-legacy-save.txt` },
  "iptables-nft-save": { "-c": `${NETFILTER}iptables-nft-save.txt` },
  "ip6tables-nft-save": { "-c": `${NETFILTER}ip6tables-nft-save.txt` },
};

const TOOL_FAULTS = {
  missing: null,
  "not permitted": `echo "$0: Operation not permitted (you must be root)" >&2; exit 1`,
  "hangs past its timeout": "exec /bin/sleep infinity",
  "exits non-zero": `echo "$0: internal error" >&2; exit 3`,
  "prints garbage": `echo '<html><body>{"nftables": [ {"oops'; echo '*nat'; exit 0`,
  "prints far more than the cap": `exec /usr/bin/yes 'a runaway tool printing the same line forever'`,
} as const;
type ToolFault = keyof typeof TOOL_FAULTS;

/** `broken`: whole tools, or one call of a tool as "tool argv" (the chain listings parity needs). */
function toolDir(broken: readonly string[], fault: ToolFault | null): string {
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-matrix-tools-"));
  for (const [tool, byArgs] of Object.entries(ANSWERS)) {
    const answer = (args: string, file: string) =>
      fault !== null && fault !== "missing" && broken.includes(`${tool} ${args}`)
        ? `  ${shq(args)}) ${TOOL_FAULTS[fault]} ;;`
        : `  ${shq(args)}) exec /bin/cat ${shq(file)} ;;`;
    const body =
      fault !== null && broken.includes(tool)
        ? TOOL_FAULTS[fault]
        : [
            'case "$*" in',
            ...Object.entries(byArgs).map(([args, file]) => answer(args, file)),
            '  *) echo "unexpected arguments: $*" >&2; exit 99 ;;',
            "esac",
          ].join("\n");
    if (body === null) continue;
    writeFileSync(join(dir, tool), `#!/bin/sh\n${body}\n`);
    chmodSync(join(dir, tool), 0o755);
  }
  return dir;
}

/** Lowers every output cap to 256 KiB, for the "far more than the cap" rows only. */
class LowCapRunner extends ToolRunner {
  override run(tool: ToolName, args: readonly string[], opts: ExecOptions) {
    return super.run(tool, args, { ...opts, maxBytes: Math.min(opts.maxBytes, 256 * 1024) });
  }
  override streamLines(
    tool: ToolName,
    args: readonly string[],
    opts: ExecOptions,
    onLine: (l: string) => void,
  ) {
    return super.streamLines(tool, args, { ...opts, maxBytes: Math.min(opts.maxBytes, 256 * 1024) }, onLine);
  }
}

// --- one scan, served ---

interface Served {
  report: NodeReport;
  metrics: string;
  /** GET /parity: its status and body. */
  parity: { status: number; body: string };
}

async function scanAndServe(opts: {
  root: string;
  tools: ToolRunner;
  kp: RunningStandin;
  parity?: { path: string; maxAgeS: number } | undefined;
}): Promise<Served> {
  const report = await scanNode({
    node: "matrix-node",
    agentVersion: "test",
    hostRoot: join(opts.root, "host"),
    procRoot: join(opts.root, "proc"),
    sysRoot: join(opts.root, "sys"),
    tools: opts.tools,
    kubeProxyMetricsUrl: opts.kp.metricsUrl,
    kubeProxyHealthUrl: opts.kp.healthUrl,
    nodeIPs: [],
    callTimeoutMs: CALL_TIMEOUT_MS,
    probeTimeoutMs: PROBE_TIMEOUT_MS,
    parity: opts.parity ? { ...opts.parity, node: "matrix-node" } : null,
  });
  const state = new AgentState(new AgentMetrics({ version: "test" }));
  state.record(await renderScan(report));
  const app = buildApp(state, { lookupVirtualServer: procIpvsLookup(join(opts.root, "proc")) });
  try {
    const health = await app.inject({ method: "GET", url: "/healthz" });
    if (health.statusCode !== 200) throw new Error(`/healthz answered ${health.statusCode}`);
    const r = await app.inject({ method: "GET", url: "/report" });
    if (r.statusCode !== 200) throw new Error(`/report answered ${r.statusCode}`);
    const m = await app.inject({ method: "GET", url: "/metrics" });
    const p = await app.inject({ method: "GET", url: "/parity" });
    return {
      report: NodeReport.parse(JSON.parse(r.body)),
      metrics: m.body,
      parity: { status: p.statusCode, body: p.body },
    };
  } finally {
    await app.close();
  }
}

// --- the table ---

interface Row {
  name: string;
  /** Probe → the kind its failure must carry. */
  fails: Partial<Record<ProbeName, ProbeErrorKind>>;
  /** Probes that stay ok but must name the failure inside their facts (ipvsadm's timeouts). */
  check?: (t: Test, s: Served) => void;
  tools?: { broken: string[]; fault: ToolFault };
  files?: (root: string) => (() => void) | void;
  standin?: Record<string, unknown>;
  /** Parity: scan with --parity-snapshot; `file` puts (or breaks) the snapshot at `path`. */
  parity?: { file: (path: string) => (() => void) | void; maxAgeS?: number };
}

const EXPECTED: Record<ToolFault, ProbeErrorKind> = {
  missing: "missing-tool",
  "not permitted": "not-permitted",
  "hangs past its timeout": "timeout",
  "exits non-zero": "exit-status",
  "prints garbage": "garbage",
  "prints far more than the cap": "output-cap",
};

const TOOL_GROUPS: { tools: string[]; probes: ProbeName[] }[] = [
  { tools: ["ip"], probes: ["addresses", "kube-ipvs0", "ip-rules"] },
  { tools: ["nft"], probes: ["nftables"] },
  { tools: ["ipset"], probes: ["ipsets"] },
  {
    tools: ["iptables-legacy-save", "ip6tables-legacy-save", "iptables-nft-save", "ip6tables-nft-save"],
    probes: ["iptables"],
  },
];

const rows: Row[] = [];
for (const g of TOOL_GROUPS) {
  for (const fault of Object.keys(TOOL_FAULTS) as ToolFault[]) {
    rows.push({
      name: `${g.tools.join("+")} ${fault}`,
      fails: Object.fromEntries(g.probes.map((p) => [p, EXPECTED[fault]])),
      tools: { broken: g.tools, fault },
    });
  }
}
// ipvsadm is asked only for IPVS timeouts: the ipvs probe keeps the table and names why it has none.
for (const fault of Object.keys(TOOL_FAULTS) as ToolFault[]) {
  rows.push({
    name: `ipvsadm ${fault}`,
    fails: {},
    tools: { broken: ["ipvsadm"], fault },
    check: (t, s) => {
      t.equal(s.report.facts.ipvs?.timeouts, null, "no timeouts");
      t.equal(s.report.facts.ipvs?.timeoutsError?.kind, EXPECTED[fault], "timeoutsError names the failure");
      t.ok((s.report.facts.ipvs?.virtualServerCount ?? 0) > 0, "the IPVS table is still read");
    },
  });
}

// Files: missing, garbage, far over the cap (a sparse file: no disk, and no newline in it), and a
// FIFO with no writer (a read that would hang forever). "Not permitted" needs a process without
// CAP_DAC_OVERRIDE and is in the real-process test.
const FILE_PROBES: { probe: ProbeName; path: string; missing: ProbeErrorKind | null }[] = [
  { probe: "kernel", path: "proc/sys/kernel/osrelease", missing: "io" },
  { probe: "os-release", path: "host/etc/os-release", missing: "io" },
  { probe: "kernel-modules", path: "proc/modules", missing: null },
  { probe: "ipvs", path: "proc/net/ip_vs", missing: null },
  { probe: "ipvs-connections", path: "proc/net/ip_vs_conn", missing: null },
  { probe: "sysctls", path: "proc/sys/net/ipv4/ip_forward", missing: null },
  { probe: "listeners", path: "proc/net/tcp", missing: "io" },
  { probe: "nft-version", path: "host/var/lib/dpkg/status", missing: null },
];
for (const f of FILE_PROBES) {
  if (f.missing !== null)
    rows.push({
      name: `${f.path} missing`,
      fails: { [f.probe]: f.missing },
      files: (r) => rmSync(join(r, f.path)),
    });
  rows.push({
    name: `${f.path} is garbage`,
    fails: { [f.probe]: "garbage" },
    files: (r) => writeFileSync(join(r, f.path), "\u0000\u001b[2J<script>garbage</script>\n\u0000\n"),
  });
  rows.push({
    name: `${f.path} is far over its cap`,
    fails: { [f.probe]: "output-cap" },
    files: (r) => {
      writeFileSync(join(r, f.path), "");
      truncateSync(join(r, f.path), 300 * 1024 * 1024);
    },
  });
  rows.push({
    // Opened without blocking and refused: a FIFO once held a thread-pool thread in open() forever.
    name: `${f.path} is a FIFO nobody writes`,
    fails: { [f.probe]: "io" },
    files: (r) => {
      const p = join(r, f.path);
      rmSync(p);
      execFileSync("/usr/bin/mkfifo", [p]);
      // Teardown: open the writer end so a read still blocked in the thread pool returns.
      return () => {
        try {
          closeSync(openSync(p, constants.O_WRONLY | constants.O_NONBLOCK));
        } catch {
          // no reader left
        }
      };
    },
  });
}

// The persistent sysctl configuration: a file systemd-sysctl would read, far over its cap or a FIFO, is
// unread (the probe fails over it, keeping what it did read), never "nothing sets it". Lines that are
// no assignment are skipped, as systemd-sysctl skips them, so garbage is not a failure here.
const SYSCTL_CONF_FILE = "host/etc/sysctl.d/k8s.conf";
rows.push({
  name: `${SYSCTL_CONF_FILE} is far over its cap`,
  fails: { "sysctl-config": "output-cap" },
  files: (r) => {
    writeFileSync(join(r, SYSCTL_CONF_FILE), "");
    truncateSync(join(r, SYSCTL_CONF_FILE), 300 * 1024 * 1024);
  },
});
rows.push({
  name: `${SYSCTL_CONF_FILE} is a FIFO nobody writes`,
  fails: { "sysctl-config": "io" },
  files: (r) => {
    const p = join(r, SYSCTL_CONF_FILE);
    rmSync(p);
    execFileSync("/usr/bin/mkfifo", [p]);
    return () => {
      try {
        closeSync(openSync(p, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        // no reader left
      }
    };
  },
});

// kube-proxy's endpoints through the stand-in.
const HTTP: { endpoint: string; probe: ProbeName }[] = [
  { endpoint: "proxyMode", probe: "kube-proxy-mode" },
  { endpoint: "configz", probe: "kube-proxy-configz" },
  { endpoint: "metrics", probe: "kube-proxy-metrics" },
  { endpoint: "healthz", probe: "kube-proxy-health" },
];
const HTTP_FAULTS: { name: string; fault: Record<string, unknown>; kind: ProbeErrorKind }[] = [
  { name: "hangs", fault: { hang: true }, kind: "timeout" },
  { name: "garbage", fault: { garbage: true }, kind: "garbage" },
  { name: "huge", fault: { huge: 64 * 1024 * 1024 }, kind: "output-cap" },
  { name: "answers 500", fault: { status: 500 }, kind: "http-status" },
];
for (const h of HTTP) {
  for (const f of HTTP_FAULTS) {
    rows.push({
      name: `kube-proxy /${h.endpoint} ${f.name}`,
      fails: { [h.probe]: f.kind },
      standin: { faults: { [h.endpoint]: f.fault } },
    });
  }
}
rows.push({
  name: "kube-proxy's metrics address refused",
  fails: {
    "kube-proxy-mode": "unreachable",
    "kube-proxy-configz": "unreachable",
    "kube-proxy-metrics": "unreachable",
  },
  standin: { faults: { proxyMode: { refuse: true } } },
});
rows.push({
  name: "kube-proxy's health address refused",
  fails: { "kube-proxy-health": "unreachable" },
  standin: { faults: { healthz: { refuse: true } } },
});

// Parity after the switch: kube-proxy answers nftables, the agent runs with --parity-snapshot. The
// snapshot file unreadable, corrupt, oversized or stale, or one of the nft reads parity needs failing:
// each is named in /report and /parity, the parity findings stay unproven (never "nothing lost": no
// finding, no counts, verify's parity line not ok), and nothing else changes.
const NFT_MODE = { standin: { mode: "nftables" } };
const DAY = 86_400;
const writeSnapshot = (takenAt: number) => (path: string) =>
  writeFileSync(path, JSON.stringify(snapshotOfRecording("matrix-node", takenAt)));
const unproven = (t: Test, s: Served) => {
  const ids = s.report.findings.map((f) => f.id);
  t.notOk(ids.includes("services-lost-in-switch"), "no services-lost-in-switch");
  t.notOk(ids.includes("service-endpoints-differ-after-switch"), "no service-endpoints-differ-after-switch");
  t.equal(sample(s.metrics, `proxyscope_parity_state{state="compared"}`) ?? "0", "0", "not compared");
  t.equal(sample(s.metrics, `proxyscope_parity_services{status="missing_after"}`), undefined, "no counts");
  const line = verifyChecks({
    report: s.report,
    second: null,
    syncWindowS: 0,
    connect: { kind: "skipped" },
  }).find((c) => c.id === "service-parity");
  t.not(line?.status, "ok", `verify's parity line is not a pass: ${line?.status}: ${line?.detail}`);
};
const parityState =
  (state: string, why: RegExp) =>
  (t: Test, s: Served): void => {
    const p = s.report.facts.parity as { state?: string; why?: string } | null;
    t.equal(p?.state, state, `/report: parity ${state}`);
    if (state === "corrupt") t.match(p?.why, why, `/report names it: ${p?.why}`);
    t.equal(s.parity.status, 200, "/parity answers");
    t.match(JSON.parse(s.parity.body), { state }, `/parity: ${state}`);
    t.equal(sample(s.metrics, `proxyscope_parity_state{state="${state}"}`), "1", `metric: ${state}`);
    unproven(t, s);
  };
rows.push({
  name: "parity: a fresh snapshot, nothing broken (the rows below differ from this by their fault only)",
  fails: {},
  ...NFT_MODE,
  parity: { file: writeSnapshot(Math.floor(Date.now() / 1000)) },
  check: (t, s) => {
    const p = s.report.facts.parity;
    t.equal(p?.state, "compared", "compared");
    if (p?.state !== "compared") return;
    t.equal(p.counts.missingAfter, 1, "the one Service IP nothing serves after");
    t.ok(p.counts.endpointsDiffer >= 1, "the moved endpoint");
    t.ok(
      s.report.findings.some((f) => f.id === "services-lost-in-switch"),
      "services-lost-in-switch",
    );
    t.equal(s.parity.status, 200);
  },
});
const PARITY_FILE_FAULTS: {
  name: string;
  file: (path: string) => (() => void) | void;
  state: string;
  why: RegExp;
}[] = [
  {
    name: "a directory (unreadable)",
    file: (p) => mkdirSync(p),
    state: "corrupt",
    why: /not a regular file|EISDIR/,
  },
  {
    name: "a FIFO nobody writes (unreadable)",
    file: (p) => {
      execFileSync("/usr/bin/mkfifo", [p]);
      return () => {
        try {
          closeSync(openSync(p, constants.O_WRONLY | constants.O_NONBLOCK));
        } catch {
          // no reader left
        }
      };
    },
    state: "corrupt",
    why: /FIFO|regular|special|ENXIO|not a file/i,
  },
  {
    name: "garbage",
    file: (p) => writeFileSync(p, "\u0000\u001b[2J<script>garbage</script>\n"),
    state: "corrupt",
    why: /not JSON/,
  },
  {
    name: "cut short",
    file: (p) =>
      writeFileSync(p, JSON.stringify(snapshotOfRecording("matrix-node", Date.now() / 1000)).slice(0, 200)),
    state: "corrupt",
    why: /not JSON/,
  },
  {
    name: "JSON, not a snapshot",
    file: (p) =>
      writeFileSync(p, JSON.stringify({ format: "proxyscope-ipvs-snapshot/9", virtualServers: "all" })),
    state: "corrupt",
    why: /not a snapshot/,
  },
  {
    name: "far over its cap",
    file: (p) => {
      writeFileSync(p, "");
      truncateSync(p, 300 * 1024 * 1024);
    },
    state: "corrupt",
    why: /cap|limit|bytes|large/i,
  },
  {
    name: "stale (three days old, the limit one day)",
    file: writeSnapshot(Math.floor(Date.now() / 1000) - 3 * DAY),
    state: "stale",
    why: /./,
  },
];
for (const f of PARITY_FILE_FAULTS)
  rows.push({
    name: `parity snapshot ${f.name}`,
    fails: {},
    ...NFT_MODE,
    parity: { file: f.file, maxAgeS: DAY },
    check: parityState(f.state, f.why),
  });
// The chain listing parity needs: it reuses the nftables probe's `list chains` of the same scan and reads
// each family's chains itself only when that listing failed, so the fault is on both reads and both fail.
for (const fault of Object.keys(TOOL_FAULTS) as ToolFault[]) {
  rows.push({
    name: `parity's chain listing ${fault}`,
    fails:
      fault === "missing"
        ? { nftables: "missing-tool", parity: "missing-tool" }
        : { nftables: EXPECTED[fault], parity: EXPECTED[fault] },
    ...NFT_MODE,
    tools: {
      broken:
        fault === "missing"
          ? ["nft"]
          : ["nft -j list chains", "nft -j list chains ip", "nft -j list chains ip6"],
      fault,
    },
    parity: { file: writeSnapshot(Math.floor(Date.now() / 1000)) },
    check: (t, s) => {
      t.equal(s.report.facts.parity, null, "/report: parity not read (never an empty table)");
      t.equal(s.parity.status, 503, "/parity says it is not read");
      t.match(JSON.parse(s.parity.body), { error: /parity not read: / }, "/parity names why");
      unproven(t, s);
    },
  });
}

// Probes that read what a failed probe produced may change with it (nftables reads the table name
// from configz); everything else must be exactly as in the baseline.
const DEPENDENTS: Partial<Record<ProbeName, ProbeName[]>> = {
  "kube-proxy-configz": ["nftables"],
  kernel: ["kernel-modules"],
};

const scenario = JSON.parse(
  readFileSync(`${FIX}kube-proxy/scenarios/iptables-default-v1.33.json`, "utf8"),
) as Record<string, unknown>;

const skip = !agentBuilt() && "run npx tsc -p . first (the kube-proxy stand-in runs from dist/)";

t.test("fault matrix", { skip }, async (t) => {
  const healthy = await startStandin(scenario);
  t.teardown(() => healthy.stop());
  const baseRoot = hostTree();
  t.teardown(() => rmSync(baseRoot, { recursive: true, force: true }));
  const baseTools = toolDir([], null);
  t.teardown(() => rmSync(baseTools, { recursive: true, force: true }));
  const baseline = await scanAndServe({ root: baseRoot, tools: new ToolRunner([baseTools]), kp: healthy });
  const failing = baseline.report.probes.filter((p) => !p.ok).map((p) => `${p.name}: ${p.error?.message}`);
  t.same(failing, [], "baseline: every probe succeeds on the recorded node");

  const runRow = async (row: Row): Promise<void> => {
    const root = mkdtempSync(join(tmpdir(), "proxyscope-matrix-row-"));
    cpSync(baseRoot, root, { recursive: true });
    const release = row.files?.(root);
    const snapshot = join(root, "parity/ipvs-snapshot.json");
    let releaseSnapshot: (() => void) | void = undefined;
    if (row.parity) {
      mkdirSync(dirname(snapshot), { recursive: true });
      releaseSnapshot = row.parity.file(snapshot);
    }
    const tools = row.tools ? toolDir(row.tools.broken, row.tools.fault) : baseTools;
    const kp = row.standin ? await startStandin({ ...scenario, ...row.standin }) : healthy;
    try {
      const runner =
        row.tools?.fault === "prints far more than the cap"
          ? new LowCapRunner([tools])
          : new ToolRunner([tools]);
      const s = await scanAndServe({
        root,
        tools: runner,
        kp,
        parity: row.parity ? { path: snapshot, maxAgeS: row.parity.maxAgeS ?? DAY } : undefined,
      });
      await t.test(row.name, async (t) => {
        t.equal(
          s.report.probes.length,
          baseline.report.probes.length,
          "the scan completed: every probe reported",
        );
        for (const [probe, kind] of Object.entries(row.fails)) {
          const p = s.report.probes.find((x) => x.name === probe);
          t.equal(p?.ok, false, `${probe} failed`);
          t.equal(
            p?.error?.kind,
            kind,
            `${probe} names the failure: ${p?.error?.kind}: ${p?.error?.message}`,
          );
          t.ok(
            (p?.error?.message.length ?? 0) > 0 && (p?.error?.message.length ?? 0) < 2000,
            "a bounded message",
          );
          t.equal(sample(s.metrics, `proxyscope_probe_success{probe="${probe}"}`), "0", `${probe} success 0`);
        }
        const mayChange = new Set<string>(
          Object.keys(row.fails).flatMap((p) => [p, ...(DEPENDENTS[p as ProbeName] ?? [])]),
        );
        for (const p of baseline.report.probes) {
          if (mayChange.has(p.name)) continue;
          const now = s.report.probes.find((x) => x.name === p.name);
          t.equal(
            now?.ok,
            true,
            `${p.name} intact${now?.error ? `: ${now.error.kind}: ${now.error.message}` : ""}`,
          );
          t.equal(
            sample(s.metrics, `proxyscope_probe_success{probe="${p.name}"}`),
            "1",
            `${p.name} success 1`,
          );
        }
        row.check?.(t, s);
      });
    } finally {
      release?.();
      releaseSnapshot?.();
      if (kp !== healthy) await kp.stop();
      if (tools !== baseTools) rmSync(tools, { recursive: true, force: true });
      rmSync(root, { recursive: true, force: true });
    }
  };

  // A few rows at a time: most of a row is waiting on a timeout.
  const queue = [...rows];
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let row = queue.shift(); row !== undefined; row = queue.shift()) await runRow(row);
    }),
  );
});
