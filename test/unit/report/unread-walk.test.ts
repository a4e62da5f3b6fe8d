import t, { type Test } from "tap";
import { buildReport, factsFrom } from "../../../agent/assemble/report.js";
import { planCleanup } from "../../../agent/cleanup/plan.js";
import { renderCleanup } from "../../../agent/cleanup/render.js";
import type { RuleSetRead } from "../../../agent/cleanup/plan.js";
import { FACT_KEY, PROBE_NAMES, type ProbeName, type ProbeRun } from "../../../agent/facts/sources.js";
import type { ProbeError } from "../../../agent/facts/probe-error.js";
import { AgentMetrics } from "../../../agent/metrics/agent-metrics.js";
import { renderScan } from "../../../agent/server/rendered-scan.js";
import { NodeReport, type NodeFacts } from "../../../agent/report/schema.js";
import { verifyChecks } from "../../../agent/verify/checks.js";
import { checkFails } from "../../../common/verify-result.js";
import { addresses, ipvsNode, kernel, NOW } from "../../helpers/rules.js";
import { configz, emptyFacts, iptablesBackend, metrics, noKernelState } from "../../helpers/facts.js";

// A part of the node not read never counts as absent. Every probe, and every iptables backend,
// is walked through "not read" on a node that is otherwise clean (after the switch) and one that is
// otherwise ready (before it): never clean, ready, verify PASS, "nothing to remove" or success 1.

const BACKENDS = [
  ["legacy", "ipv4"],
  ["legacy", "ipv6"],
  ["nft", "ipv4"],
  ["nft", "ipv6"],
] as const;

// What every probe reads on a healthy node; the shapes are the probes' own (schemas in agent/facts/).
const host: Partial<NodeFacts> = {
  kernel: kernel("6.8.0-51-generic"),
  osRelease: {
    source: "/etc/os-release",
    id: "debian",
    idLike: [],
    versionId: "12",
    versionCodename: "bookworm",
    prettyName: "Debian GNU/Linux 12 (bookworm)",
  },
  nftVersion: { version: "1.0.6", source: "dpkg", detail: "nftables 1.0.6-2+deb12u2" },
  kernelModules: { modules: [{ name: "nf_tables", state: "loaded" }], moduleTreeReadable: true },
  sysctls: {
    values: [
      { name: "net.ipv4.conf.all.arp_ignore", value: "0" },
      { name: "net.ipv4.conf.all.arp_announce", value: "0" },
    ],
  },
  addresses: addresses("192.168.4.11"),
  ipsets: { available: true, sets: [] },
  iptables: { backends: BACKENDS.map(([backend, family]) => iptablesBackend({ backend, family })) },
  kubeProxyHealth: {
    status: 200,
    shape: "v1.33+",
    healthy: true,
    lastUpdated: null,
    currentTime: null,
    nodeEligible: true,
  },
};

const cleanFacts = (): NodeFacts =>
  emptyFacts({
    ...noKernelState,
    ...host,
    // Both families' tables, as nftables mode makes them: one missing is a warning, and "clean" means none.
    nftables: {
      tables: (["ip", "ip6"] as const).map((family) => ({ family, name: "kube-proxy", owner: "kube-proxy" })),
      kubeProxyTableName: "kube-proxy",
      kubeProxy: (["ip", "ip6"] as const).map((family) => ({
        family,
        name: "kube-proxy",
        sets: [],
        chains: { total: 1, service: 0, endpoint: 0, external: 0, base: [] },
      })),
      firewalls: [],
    },
    proxyMode: { mode: "nftables" },
    configz: configz({ mode: "nftables" }),
    kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 10 }, "v1.34.0"),
  });

// A current ipvs node: its kube-proxy keeps KUBE-IPVS-FILTER (kubernetes/kubernetes#108460) in the filter table.
const IPVS_FILTER = {
  table: "filter",
  name: "KUBE-IPVS-FILTER",
  rules: 6,
  owner: "kube-proxy-ipvs" as const,
};
const readyFacts = (): NodeFacts =>
  ipvsNode({
    ...host,
    iptables: {
      backends: BACKENDS.map(([backend, family]) =>
        iptablesBackend({ backend, family, kubeChains: backend === "nft" ? [IPVS_FILTER] : [] }),
      ),
    },
    ipsets: { available: true, sets: [] },
    kubeProxyHealth: host.kubeProxyHealth,
  });

const finishedAt = new Date(NOW * 1000);

function runsOf(facts: NodeFacts, failed: Partial<Record<ProbeName, ProbeError>> = {}): ProbeRun[] {
  return PROBE_NAMES.map((name) => {
    const error = failed[name];
    return error !== undefined
      ? { name, outcome: { ok: false, error }, durationMs: 1 }
      : { name, outcome: { ok: true, facts: facts[FACT_KEY[name]] }, durationMs: 1 };
  });
}

async function judgeRuns(runs: ProbeRun[]) {
  const report = buildReport(runs, {
    node: "node-a",
    agentVersion: "0.1.0",
    startedAt: new Date(finishedAt.getTime() - 1000),
    finishedAt,
  });
  t.ok(
    NodeReport.safeParse(JSON.parse(JSON.stringify(report))).success,
    "the report is on the wire contract",
  );
  const full = { ...report, facts: factsFrom(runs), truncated: {} };
  // Cleanup reads each backend the scan read; one the scan did not read stays unread.
  const ruleSets: RuleSetRead[] = (full.facts.iptables?.backends ?? []).map((b) =>
    b.read
      ? { backend: b.backend, family: b.family, tables: [] }
      : { backend: b.backend, family: b.family, error: `not read by the scan: ${b.why.message}` },
  );
  const plan = planCleanup(full, ruleSets, { strictArp: true });
  const verify = verifyChecks({
    report,
    second: null,
    syncWindowS: 0,
    connect: {
      kind: "done",
      address: "10.96.0.1:443",
      outcome: { ok: true, localAddress: null, durationMs: 1 },
    },
  });
  const m = new AgentMetrics({ version: "0.1.0" });
  m.recordScan((await renderScan(report)).metrics);
  return { report, plan, verify, metricsText: m };
}

const broken: ProbeError = { kind: "garbage", message: "the test says so" };
// What cleanup reads to decide: a hole in any of these must show in its plan.
const CLEANUP_READS: readonly ProbeName[] = ["iptables", "ipsets", "ipvs", "kube-ipvs0", "sysctls"];

t.test("the baselines are what they claim: clean and verify PASS; ready", async (t) => {
  const clean = await judgeRuns(runsOf(cleanFacts()));
  t.equal(clean.report.verdict, "clean", JSON.stringify(clean.report.findings.map((f) => f.id)));
  t.same(
    clean.verify.filter(checkFails).map((c) => `${c.id}: ${c.detail}`),
    [],
    "verify passes on the clean node",
  );
  t.same(clean.plan, { actions: [], kept: [], unread: [] });
  t.match(renderCleanup(outcome(clean.plan, clean.report)), /\(nothing to remove\)/);
  const ready = await judgeRuns(runsOf(readyFacts()));
  t.equal(ready.report.verdict, "ready", JSON.stringify(ready.report.findings.map((f) => f.id)));
});

function outcome(plan: ReturnType<typeof planCleanup>, report: NodeReport) {
  const s = { verdict: report.verdict, phase: report.phase, findings: [] };
  return {
    schemaVersion: "1" as const,
    node: "node-a",
    mode: "dry-run" as const,
    refusal: null,
    before: s,
    plan,
    results: [],
    after: null,
  };
}

async function assertHole(
  t: Test,
  what: string,
  probe: ProbeName,
  clean: Awaited<ReturnType<typeof judgeRuns>>,
  ready: Awaited<ReturnType<typeof judgeRuns>>,
) {
  t.not(clean.report.verdict, "clean", `${what}: not clean`);
  t.not(ready.report.verdict, "ready", `${what}: not ready`);
  const failed = clean.verify.filter(checkFails).map((c) => c.id);
  t.not(failed.length, 0, `${what}: verify does not PASS`);
  for (const r of [clean, ready]) {
    const text = await r.metricsText.exposition();
    t.match(
      text,
      new RegExp(`^proxyscope_probe_success\\{probe="${probe}"\\} 0$`, "m"),
      `${what}: success 0`,
    );
    t.notMatch(text, new RegExp(`^proxyscope_probe_success\\{probe="${probe}"\\} 1$`, "m"));
  }
  if (CLEANUP_READS.includes(probe)) {
    t.not(clean.plan.unread.length, 0, `${what}: cleanup names what it could not read`);
    t.notMatch(renderCleanup(outcome(clean.plan, clean.report)), /nothing to remove/, `${what}: cleanup`);
  }
}

t.test("every probe not read: no clean, ready, PASS, nothing-to-remove or success 1", async (t) => {
  for (const probe of PROBE_NAMES) {
    const clean = await judgeRuns(runsOf(cleanFacts(), { [probe]: broken }));
    const ready = await judgeRuns(runsOf(readyFacts(), { [probe]: broken }));
    await assertHole(t, `probe ${probe}`, probe, clean, ready);
  }
});

t.test("every iptables backend not read, the probe itself ok: the same", async (t) => {
  for (const [backend, family] of BACKENDS) {
    const hole = (f: NodeFacts): NodeFacts => ({
      ...f,
      iptables: {
        backends: (f.iptables?.backends ?? []).map((b) =>
          b.backend === backend && b.family === family
            ? { backend, family, read: false as const, why: { kind: "garbage" as const, message: "line 18" } }
            : b,
        ),
      },
    });
    const clean = await judgeRuns(runsOf(hole(cleanFacts())));
    const ready = await judgeRuns(runsOf(hole(readyFacts())));
    await assertHole(t, `iptables ${backend} ${family}`, "iptables", clean, ready);
    t.match(
      clean.report.probes.find((p) => p.name === "iptables")?.error?.message,
      new RegExp(`not read: ${backend} ${family} \\(garbage: line 18\\)`),
      "the report says which backend and why",
    );
    t.notOk(
      clean.report.facts.iptables?.backends.some((b) => !b.read && "totalRules" in b),
      "an unread backend carries no count",
    );
  }
});
