// Property-based tests for every parser the collector has, in the style of test/unit/parse/fuzz.test.ts
// and with its generators (test/helpers/fuzz.ts): the KubeProxyConfiguration YAML of the ConfigMap, the
// DaemonSet's flags, the Node/Service/ConfigMap/DaemonSet objects as the official client hands them over,
// an agent's /report body, the PromQL answers, the static target lists and the CLI flags. Inputs are
// random text, the recorded objects (test/fixtures/kubernetes/) and NodeReports made by the agent's own
// builder, mutated, JSON with values of the wrong type, hostile strings and ~10 MB pathological text.
// The property: a typed result or a typed error, never a throw past the parser; an error is a bounded
// string; a value fits the schema the report publishes. Time on 10 MB inputs is shown with a generous
// deadline (600 s) only quadratic work or a backtracking regex would miss; it is not a benchmark.
import { readFileSync } from "node:fs";
import { ObjectSerializer } from "@kubernetes/client-node/dist/gen/models/ObjectSerializer.js";
import type { V1ConfigMap, V1DaemonSet, V1Pod, V1Service } from "@kubernetes/client-node";
import fc from "fast-check";
import t from "tap";
import type { z } from "zod";
import { NodeReport } from "../../../agent/report/schema.js";
import { ConfigError, loadConfig } from "../../../collector/config.js";
import {
  observationFromDigest,
  observationFromReport,
  parseFleetDigest,
  parseNodeReport,
} from "../../../collector/gather/observe.js";
import { FleetDigest, fleetDigestOf, kernelMajorMinor, kubeMajorMinor } from "../../../agent/contract.js";
import {
  flagValue,
  parseFeatureGatesFlag,
  parseKubeProxyConfig,
} from "../../../collector/parse/kube-proxy-config.js";
import {
  ApiNode,
  KubeProxyConfigFile,
  KubeProxyDaemonSet,
  MirrorPod,
} from "../../../collector/report/cluster-facts.js";
import { NodeObservation } from "../../../collector/report/schema.js";
import {
  toApiNode,
  toApiService,
  toKubeProxyConfigMap,
  toKubeProxyDaemonSet,
  toMirrorPod,
} from "../../../collector/sources/kubernetes/index.js";
import {
  observationsFromSeries,
  parseQueryAnswer,
  queries,
  type QueryName,
} from "../../../collector/sources/prometheus.js";
import { parseTargets, targetsFromFlags } from "../../../collector/sources/static.js";
import { emptyFacts, noKernelState, refused } from "../../helpers/facts.js";
import {
  anyText,
  FUZZ_RUNS,
  hostile,
  HOSTILE_STRINGS,
  jsonMutated,
  mutated,
  pathological,
} from "../../helpers/fuzz.js";
import { movedWithBlackHole, reportOf } from "../../helpers/reports.js";

const fixture = (name: string) =>
  readFileSync(new URL(`../../fixtures/kubernetes/${name}`, import.meta.url), "utf8");
const configMapJson = fixture("kube-proxy-configmap.kubeadm-ipvs.json");
const configConf = (JSON.parse(configMapJson) as { data: Record<string, string> }).data["config.conf"]!;
const daemonSetJson = fixture("kube-proxy-daemonset.kubeadm.json");
const eksDaemonSetJson = fixture("kube-proxy-daemonset.eks.json");
const mirrorPodJson = fixture("kube-proxy-mirror-pod.rke2.template.json");
const nodeJson = fixture("node.template.json");
const servicesJson = (JSON.parse(fixture("services.json")) as unknown[]).map((s) => JSON.stringify(s));

// NodeReports as the agent builds them (its builder and rules), from three kinds of node.
const reportSeeds = [
  reportOf(movedWithBlackHole()),
  reportOf({
    ...emptyFacts(),
    ...noKernelState,
    kernel: { release: "4.18.0-553.el8_10.x86_64", major: 4, minor: 18, patch: 0 },
    proxyMode: { mode: "ipvs" },
  }),
  reportOf(
    { kernel: { release: "6.8.0-1015-aws", major: 6, minor: 8, patch: 0 } },
    { "kube-proxy-metrics": refused },
  ),
].map((r) => JSON.stringify(r));
// What a current agent serves on /report/fleet for the same nodes.
const digestSeeds = reportSeeds.map((r) => JSON.stringify(fleetDigestOf(NodeReport.parse(JSON.parse(r)))));

// Instant-query answers in the shape of Prometheus's HTTP API (api/v1/query, resultType vector).
const answer = (result: object[]) =>
  JSON.stringify({ status: "success", data: { resultType: "vector", result } });
const promSeeds = [
  answer([
    { metric: { node: "node-a", phase: "ipvs" }, value: [1764417600.123, "1"] },
    { metric: { node: "node-b", phase: "nftables" }, value: [1764417600.123, "1"] },
  ]),
  answer([
    { metric: { node: "node-a", id: "ipvs-mode-deprecated", severity: "warning" }, value: [1764417600, "1"] },
  ]),
  answer([{ metric: { node: "node-a" }, value: [1764417600, "1764417590"] }]),
  answer([]),
  JSON.stringify({
    status: "error",
    errorType: "bad_data",
    error: 'invalid parameter "query": 1:1: parse error',
  }),
];

const targetSeeds = [
  "# agents on the bare-metal pool\nnode-1 http://10.0.0.7:9977\nhttp://10.0.0.8:9977\n\nnode-3 https://[fd00::3]:9977 # v6\n",
];

const argvSeeds = [
  JSON.stringify([
    "report",
    "--source",
    "static",
    "--agents",
    "n1=http://10.0.0.7:9977",
    "--output",
    "json",
    "--fail-on",
    "unanswered",
  ]),
  JSON.stringify([
    "serve",
    "--kubeconfig",
    "/etc/kc",
    "--listen",
    "127.0.0.1",
    "--port",
    "9978",
    "--interval-s",
    "60",
  ]),
];

type Outcome =
  { ok: true; value: unknown; schema?: z.ZodType } | { ok: false; error: string } | { skip: true };

interface Subject {
  name: string;
  seeds: string[];
  json?: boolean;
  run: (input: string) => Outcome;
}

/**
 * The client deserializes what the API server sent before we see it; what it rejects never reaches us
 * (the call fails and becomes a named gap). It passes a field of the wrong type through (a numeric
 * name stays a number): a real API server validates those, so for objects the property is "no throw".
 */
function deserialize<T>(text: string, type: string): T | null {
  try {
    // Format "" as the generated API calls it (CoreV1Api: deserialize(parse(body), type, "")).
    return ObjectSerializer.deserialize(JSON.parse(text), type, "") as T;
  } catch {
    return null;
  }
}

const SAFE_INT = (n: { major: number; minor: number } | null) =>
  n === null || (Number.isSafeInteger(n.major) && Number.isSafeInteger(n.minor));

const subjects: Subject[] = [
  {
    name: "KubeProxyConfiguration (config.conf)",
    seeds: [configConf, 'kind: KubeProxyConfiguration\nmode: ""\n', "mode: nftables\nipvs: {}\n"],
    run: (s) => {
      const r = parseKubeProxyConfig(s);
      return r.ok ? { ok: true, value: r.value, schema: KubeProxyConfigFile } : r;
    },
  },
  {
    name: "ConfigMap object",
    seeds: [configMapJson],
    json: true,
    run: (s) => {
      const cm = deserialize<V1ConfigMap>(s, "V1ConfigMap");
      return cm ? { ok: true, value: toKubeProxyConfigMap(cm) } : { skip: true };
    },
  },
  {
    name: "DaemonSet object (command, args, volumes)",
    seeds: [daemonSetJson, eksDaemonSetJson],
    json: true,
    run: (s) => {
      const ds = deserialize<V1DaemonSet>(s, "V1DaemonSet");
      return ds ? { ok: true, value: toKubeProxyDaemonSet(ds) } : { skip: true };
    },
  },
  {
    name: "static pod's mirror Pod object (command, args, labels)",
    seeds: [mirrorPodJson],
    json: true,
    run: (s) => {
      const p = deserialize<V1Pod>(s, "V1Pod");
      return p ? { ok: true, value: toMirrorPod(p), schema: MirrorPod } : { skip: true };
    },
  },
  {
    name: "Node object",
    seeds: [nodeJson],
    json: true,
    // As the node list is read: the API server's JSON straight into toApiNode, no client deserializer.
    run: (s) => {
      let n: unknown;
      try {
        n = JSON.parse(s);
      } catch {
        return { skip: true };
      }
      return { ok: true, value: toApiNode(n), schema: ApiNode };
    },
  },
  {
    name: "Service object",
    seeds: servicesJson,
    json: true,
    run: (s) => {
      const svc = deserialize<V1Service>(s, "V1Service");
      return svc ? { ok: true, value: toApiService(svc) } : { skip: true };
    },
  },
  {
    name: "--feature-gates value",
    seeds: ["KubeProxyIPVS=true,NFTablesProxyMode=false", "A=TRUE, B = false ,C"],
    run: (s) => ({
      ok: true,
      value: parseFeatureGatesFlag(s),
      schema: KubeProxyDaemonSet.shape.featureGatesFlag,
    }),
  },
  {
    name: "a flag in argv (one line an argument)",
    seeds: [
      "kube-proxy\n--config=/var/lib/kube-proxy/config.conf\n--proxy-mode\nipvs\n--feature-gates=A=true",
    ],
    run: (s) => {
      const argv = s.split("\n");
      const values = ["config", "proxy-mode", "feature-gates"].map((f) => flagValue(argv, f));
      const bad = values.find(
        (v) => v !== null && (typeof v !== "string" || !argv.some((a) => a.includes(v))),
      );
      return bad === undefined ? { ok: true, value: values } : { ok: false, error: `invented ${bad}` };
    },
  },
  {
    name: "Kubernetes and kernel versions",
    seeds: ["v1.37.2-eks-abc", "6.8.0-51-generic", "4.18.0-553.el8_10.x86_64"],
    run: (s) => {
      const a = kubeMajorMinor(s);
      const b = kernelMajorMinor(s);
      return SAFE_INT(a) && SAFE_INT(b)
        ? { ok: true, value: [a, b] }
        : { ok: false, error: `not a safe integer: ${JSON.stringify([a, b])}` };
    },
  },
  {
    name: "agent /report body",
    seeds: reportSeeds,
    json: true,
    run: (s) => {
      const r = parseNodeReport(s);
      if (!r.ok) return { ok: false, error: r.reason };
      const obs = observationFromReport(r.report, "http://10.0.0.7:9977/report", "node-a");
      return NodeReport.safeParse(r.report).success
        ? { ok: true, value: obs, schema: NodeObservation }
        : { ok: false, error: "accepted a report outside NodeReport" };
    },
  },
  {
    name: "agent /report/fleet body",
    seeds: digestSeeds,
    json: true,
    run: (s) => {
      const r = parseFleetDigest(s);
      if (!r.ok) return { ok: false, error: r.reason };
      const obs = observationFromDigest(r.digest, "http://10.0.0.7:9977/report/fleet", "node-a", r.unknown);
      return FleetDigest.safeParse(r.digest).success
        ? { ok: true, value: obs, schema: NodeObservation }
        : { ok: false, error: "accepted a digest outside FleetDigest" };
    },
  },
  {
    name: "PromQL instant-query answer",
    seeds: promSeeds,
    json: true,
    run: (s) => {
      const r = parseQueryAnswer(s, "max by (node, phase) (proxyscope_node_phase) == 1");
      if (!r.ok) return r;
      // The same samples answer every query: observations for each node they name, never a throw.
      const results = Object.fromEntries(
        (Object.keys(queries("node")) as QueryName[]).map((q) => [q, r.value]),
      ) as Record<QueryName, typeof r.value>;
      const obs = observationsFromSeries(results, "node", "http://prometheus:9090", 1764417600, 900);
      const names = obs.map((o) => o.node);
      if (new Set(names).size !== names.length) return { ok: false, error: "a node twice" };
      return { ok: true, value: obs, schema: NodeObservation.array() };
    },
  },
  {
    name: "static target list (--agents-file)",
    seeds: targetSeeds,
    run: (s) => checkTargets(parseTargets(s)),
  },
  {
    name: "static targets (--agents flags)",
    seeds: ["node-1=http://10.0.0.7:9977\nhttp://10.0.0.8:9977"],
    run: (s) => checkTargets(targetsFromFlags(s.split("\n"))),
  },
  {
    name: "collector flags",
    seeds: argvSeeds,
    json: true,
    run: (s) => {
      let argv: unknown;
      try {
        argv = JSON.parse(s);
      } catch {
        argv = s.split(/\s+/);
      }
      // process.argv holds only strings; an object whose toString is not a function is no command line.
      if (!Array.isArray(argv) || !argv.every((a) => typeof a === "string")) return { skip: true };
      try {
        return { ok: true, value: loadConfig(argv.slice(1)) };
      } catch (e) {
        if (e instanceof ConfigError) return { ok: false, error: e.message };
        throw e;
      }
    },
  },
];

function checkTargets(r: ReturnType<typeof parseTargets>): Outcome {
  const bad = r.targets.find(
    (x) => !/^https?:\/\/\S+$/.test(x.url) || (x.node !== null && /\s/.test(x.node)),
  );
  if (bad) return { ok: false, error: `accepted ${JSON.stringify(bad).slice(0, 200)}` };
  const long = r.errors.find((e) => e.length > 200);
  if (long) return { ok: false, error: long };
  return { ok: true, value: r };
}

// An error quotes a bounded excerpt: a 10 MB input must not become a 10 MB reason in the report.
const MAX_ERROR = 2000;

function check(s: Subject, input: string): string | null {
  let r: Outcome;
  try {
    r = s.run(input);
  } catch (e) {
    return `threw ${String(e).slice(0, 300)}`;
  }
  if ("skip" in r) return null;
  if (!r.ok) {
    if (typeof r.error !== "string" || r.error.length === 0) return "error is not a non-empty string";
    if (r.error.length > MAX_ERROR) return `error is ${r.error.length} characters (input ${input.length})`;
    if (/^invented|^accepted|^not a safe|^a node twice/.test(r.error)) return r.error;
    return null;
  }
  if (r.schema) {
    const c = r.schema.safeParse(r.value);
    if (!c.success) return `value outside its schema: ${c.error.message.slice(0, 400)}`;
  }
  return null;
}

const property = (s: Subject) => (input: string) => {
  const problem = check(s, input);
  if (problem !== null)
    throw new Error(`${s.name}: ${problem}; input ${JSON.stringify(input.slice(0, 300))}`);
};

const opts = { numRuns: FUZZ_RUNS, endOnFailure: true };

t.test("every recorded input parses", async (t) => {
  for (const s of subjects)
    for (const seed of s.seeds) t.equal(check(s, seed), null, `${s.name}: ${seed.slice(0, 60)}`);
});

for (const s of subjects) {
  t.test(`${s.name}: random, mutated and hostile input never throws past the parser`, async (t) => {
    fc.assert(fc.property(anyText, property(s)), opts);
    fc.assert(fc.property(hostile, property(s)), { ...opts, numRuns: HOSTILE_STRINGS.length });
    fc.assert(fc.property(mutated(s.seeds), property(s)), { ...opts, numRuns: FUZZ_RUNS * 2 });
    if (s.json)
      fc.assert(fc.property(jsonMutated(s.seeds), property(s)), { ...opts, numRuns: FUZZ_RUNS * 3 });
    t.pass(s.name);
  });
}

// Values a YAML document can carry that a careless String() or spread would trip on.
t.test("KubeProxyConfiguration values of every YAML type give a typed answer", async (t) => {
  const yamlValue = fc.oneof(
    fc.constantFrom(
      "{toString: 1}",
      "{valueOf: 1, toString: 1}",
      "[{toString: 1}]",
      "!!binary aGVsbG8=",
      "2001-12-14t21:59:43.10-05:00",
      "*a",
      "&a [1, *a]",
      "~",
      ".nan",
      "-.inf",
      "0x1F",
      "{__proto__: {polluted: true}}",
      "[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]",
      "!!js/function 'function(){}'",
    ),
    hostile.map((h) => JSON.stringify(h)),
  );
  const key = fc.constantFrom("mode", "ipvs", "featureGates", "nodePortAddresses", "conntrack", "kind");
  const sub = fc.constantFrom("scheduler", "strictARP", "tcpBeLiberal", "KubeProxyIPVS", "__proto__");
  const doc = fc
    .array(
      fc.tuple(
        key,
        fc.oneof(
          yamlValue,
          fc.tuple(sub, yamlValue).map(([k, v]) => `{${k}: ${v}}`),
        ),
      ),
      {
        minLength: 1,
        maxLength: 5,
      },
    )
    .map((kv) => kv.map(([k, v]) => `${k}: ${v}`).join("\n"));
  fc.assert(fc.property(doc, property(subjects[0]!)), { ...opts, numRuns: FUZZ_RUNS * 3 });
  t.equal(({} as Record<string, unknown>).polluted, undefined, "no prototype was polluted");
});

// Generous on purpose (a 2-core CI machine under load): only pathological behaviour misses it.
// 10 s, then 120 s, were missed at load 30-45 on 2 cores (10 MB of open brackets, JSON.parse: 194 s);
// quadratic work on 10 MB takes hours, so ten minutes still tells it apart.
const DEADLINE_MS = 600_000;
// Every subject's 10 MB inputs, at that load: longer than tap's default 600 s for the file.
t.setTimeout(3_600_000);

t.test("10 MB inputs parse within a generous deadline", async (t) => {
  // Text parsers only: API objects reach us through the client's JSON.parse, and argv is bounded by the
  // kernel (ARG_MAX; node's parseArgs is not linear in it).
  for (const s of subjects.filter((x) => !/object|flags/.test(x.name))) {
    for (const [what, input] of Object.entries(pathological(s.seeds[0]!))) {
      const started = performance.now();
      const problem = check(s, input);
      const ms = performance.now() - started;
      t.equal(problem, null, `${s.name}, ${what}: a typed result`);
      t.ok(ms < DEADLINE_MS, `${s.name}, ${what}: ${Math.round(ms)} ms (deadline ${DEADLINE_MS} ms)`);
    }
  }
});

t.test("a huge value inside valid JSON or YAML does not become a huge reason", async (t) => {
  const big = "x".repeat(1_000_000);
  const report = JSON.parse(reportSeeds[0]!) as Record<string, unknown>;
  for (const [what, input] of Object.entries({
    "schemaVersion of 1 MB": JSON.stringify({ ...report, schemaVersion: big }),
    "a 1 MB key where a field is expected": JSON.stringify({ ...report, [big]: 1, node: 7 }),
    "a 1 MB node name of the wrong type": JSON.stringify({ ...report, node: [big] }),
  }))
    t.equal(
      check(
        subjects.find((s) => s.name === "agent /report body")!,
        input,
      ),
      null,
      what,
    );
  t.equal(check(subjects[0]!, `kind: ${big}\n`), null, "a 1 MB kind");
  t.equal(check(subjects[0]!, `mode: [${big}]\n`), null, "a 1 MB mode of the wrong type");
});
