// The Helm chart (charts/proxyscope) against manifests/, with the real helm binary (scripts/build-go-tool.sh helm):
// it lints strictly, renders with default values exactly the objects kustomize renders from manifests/,
// each value changes exactly what it names, and everything it renders is valid for the API.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import t from "tap";
import { parse } from "yaml";
import {
  K8sObject,
  MANIFESTS,
  ROOT,
  kustomizeBuild,
  unknownFieldDiagnostics,
  validateAgainstSchema,
} from "./lib.js";
import { CHART, helm, helmBinary, helmTemplate, helmTemplateRun } from "./helm.js";

const id = (o: K8sObject) => `${o.kind}/${o.metadata.namespace ?? "-"}/${o.metadata.name}`;
const sorted = (objs: K8sObject[]) => [...objs].sort((a, b) => (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0));
const pkgVersion = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string })
  .version;

/** kustomize's render of manifests/ with the given components; fails naming why, never skips. */
function kustomize(components: string[] = []): K8sObject[] {
  let dir = MANIFESTS;
  let cleanup = () => {};
  if (components.length > 0) {
    const overlay = mkdtempSync(join(tmpdir(), "proxyscope-helm-overlay-"));
    cleanup = () => rmSync(overlay, { recursive: true, force: true });
    writeFileSync(
      join(overlay, "kustomization.yaml"),
      `resources: [${JSON.stringify(relative(overlay, MANIFESTS))}]\ncomponents: [${components
        .map((c) => JSON.stringify(relative(overlay, join(MANIFESTS, "components", c))))
        .join(", ")}]\n`,
    );
    dir = overlay;
  }
  try {
    const r = kustomizeBuild(dir);
    if ("error" in r) throw new Error(`kustomize build ${dir}: ${r.error}`);
    return r.objects;
  } finally {
    cleanup();
  }
}

const agent = (objs: K8sObject[]) => objs.find((o) => o.kind === "DaemonSet")!;

t.test("helm is built from the Go module proxy at the pinned version", async (t) => {
  const bin = helmBinary();
  const pinned = /^ {4}VERSION="(v3\.[0-9.]+)"$/m.exec(
    readFileSync(join(ROOT, "scripts/build-go-tool.sh"), "utf8"),
  )?.[1];
  t.ok(pinned, "scripts/build-go-tool.sh pins a helm v3 release");
  t.match(bin, `/proxyscope/helm/${pinned}/helm`, "cached outside the checkout, keyed by version");
  t.notOk(bin.startsWith(ROOT), "not inside the checkout");
  const v = helm(["version", "--template", "{{.Version}}"]);
  t.equal(v.status, 0, v.stderr);
  t.equal(v.stdout.trim(), pinned, "the binary is that release");
});

t.test("without Go or the module proxy the helm build fails naming which", async (t) => {
  const cache = mkdtempSync(join(tmpdir(), "proxyscope-helm-cache-"));
  t.teardown(() => rmSync(cache, { recursive: true, force: true, maxRetries: 5 }));
  // Go's telemetry (on by default in this HOME) starts an uploader that writes under
  // $HOME/.config/go/telemetry after the go command has exited, past this test's clean-up: the suite
  // found that directory outliving the run. Telemetry off in this HOME, as `go telemetry off` writes it.
  mkdirSync(join(cache, ".config/go/telemetry"), { recursive: true });
  writeFileSync(join(cache, ".config/go/telemetry/mode"), "off\n");
  const run = (env: Record<string, string>) =>
    spawnSync("bash", [join(ROOT, "scripts/build-go-tool.sh"), "helm"], {
      encoding: "utf8",
      timeout: 300_000,
      env: { HOME: cache, XDG_CACHE_HOME: cache, ...env },
    });
  const noGo = run({ PATH: "/usr/bin:/bin" });
  t.equal(noGo.status, 2, "exit 2");
  t.match(noGo.stderr, /Go is not installed/, noGo.stderr.trim());
  t.equal(noGo.stdout, "", "no path printed");
  // A proxy nobody answers (loopback, discard port) and an empty module cache: the build must fail.
  const noProxy = run({
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    GOPROXY: "http://127.0.0.1:9",
    GOMODCACHE: join(cache, "mod"),
    GOFLAGS: "-modcacherw",
  });
  t.equal(noProxy.status, 3, "exit 3");
  t.match(noProxy.stderr, /is the Go module proxy http:\/\/127\.0\.0\.1:9 reachable/, noProxy.stderr.trim());
  t.equal(noProxy.stdout, "", "no path printed");
});

// What the release workflow's chart job runs: the archive `helm install proxyscope URL` reads.
t.test("helm package makes proxyscope-VERSION.tgz, which helm installs from as the chart", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-helm-package-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const pack = helm(["package", CHART, "--destination", dir]);
  t.equal(pack.status, 0, pack.stderr);
  const tgz = join(dir, `proxyscope-${pkgVersion}.tgz`);
  const shown = helm(["show", "chart", tgz]);
  t.equal(shown.status, 0, shown.stderr);
  t.match(shown.stdout, new RegExp(`^version: ${pkgVersion.replace(/\./g, "\\.")}$`, "m"));
  const rendered = helm(["template", "proxyscope", tgz]);
  t.equal(rendered.status, 0, rendered.stderr);
  t.match(rendered.stdout, /kind: DaemonSet/, "the packaged chart renders the agent");
});

t.test("Chart.yaml carries package.json's version", async (t) => {
  const chart = parse(readFileSync(join(CHART, "Chart.yaml"), "utf8")) as Record<string, string>;
  t.equal(chart.version, pkgVersion, "version");
  t.equal(chart.appVersion, pkgVersion, "appVersion (the default image tag)");
});

t.test("the chart's rules and dashboard are the mixin's sources, byte for byte", async (t) => {
  for (const [from, to] of [
    ["mixin/proxyscope-rules.yaml", "files/proxyscope-rules.yaml"],
    ["mixin/proxyscope-dashboard.json", "files/proxyscope-dashboard.json"],
  ] as const) {
    t.ok(readFileSync(join(CHART, to)).equals(readFileSync(join(ROOT, from))), `${to} equals ${from}`);
  }
  const check = spawnSync(process.execPath, [join(ROOT, "scripts/sync-chart-files.mjs"), "--check"], {
    encoding: "utf8",
  });
  t.equal(check.status, 0, `sync-chart-files --check: ${check.stderr}`);
});

t.test("helm lint --strict passes, with the defaults and with every switch turned", async (t) => {
  const plain = helm(["lint", "--strict", CHART]);
  t.equal(plain.status, 0, `${plain.stdout}${plain.stderr}`);
  t.notMatch(plain.stdout, /\[(WARNING|ERROR)\]/, "no warnings");
  const turned = helm([
    "lint",
    "--strict",
    CHART,
    ...["--set", "agent.webConfig.enabled=true,agent.hostDpkgStatus=false,collector.enabled=false"],
    ...["--set", "serviceMonitor.enabled=false,prometheusRule.enabled=false,grafanaDashboard.enabled=false"],
    ...["--set", "namespace.create=false,image.digest=sha256:0123456789abcdef,agent.detailFrom=loopback"],
  ]);
  t.equal(turned.status, 0, `${turned.stdout}${turned.stderr}`);
});

t.test("with default values the chart renders exactly what manifests/ renders", async (t) => {
  const want = sorted(kustomize());
  const got = sorted(helmTemplate());
  t.same(got.map(id), want.map(id), "the same objects");
  for (let i = 0; i < want.length; i++) t.strictSame(got[i], want[i], `${id(want[i]!)} identical`);
});

t.test("agent.webConfig and agent.hostDpkgStatus render what the kustomize components do", async (t) => {
  t.strictSame(
    sorted(helmTemplate({ "agent.webConfig.enabled": true })),
    sorted(kustomize(["web-config"])),
    "webConfig.enabled = the web-config component",
  );
  t.strictSame(
    sorted(helmTemplate({ "agent.hostDpkgStatus": false })),
    sorted(kustomize(["no-dpkg"])),
    "hostDpkgStatus=false = the no-dpkg component",
  );
});

t.test("each value changes exactly what it names", async (t) => {
  const base = sorted(helmTemplate());

  // Image tag, --detail-from and the monitoring objects off: the expected render is the default one with
  // just those edits made here by hand.
  const want = structuredClone(base).filter(
    (o) =>
      o.kind !== "ServiceMonitor" &&
      o.kind !== "PrometheusRule" &&
      !(o.kind === "ConfigMap" && o.metadata.name === "proxyscope-grafana-dashboard"),
  );
  t.equal(base.length - want.length, 4, "two ServiceMonitors, the PrometheusRule and the dashboard removed");
  for (const o of want.filter((o) => o.kind === "DaemonSet" || o.kind === "Deployment")) {
    for (const c of o.spec.template.spec.containers) c.image = "registry.example/proxyscope:9.9.9";
  }
  const args: string[] = agent(want).spec.template.spec.containers[0].args;
  args[args.indexOf("--detail-from") + 1] = "loopback";
  t.strictSame(
    sorted(
      helmTemplate({
        "image.repository": "registry.example/proxyscope",
        "image.tag": "9.9.9",
        "agent.detailFrom": "loopback",
        "serviceMonitor.enabled": false,
        "prometheusRule.enabled": false,
        "grafanaDashboard.enabled": false,
      }),
    ),
    want,
    "image, --detail-from and monitoring off",
  );

  const digest = "sha256:" + "ab".repeat(32);
  const byDigest = helmTemplate({ "image.digest": digest, "image.tag": "ignored" });
  t.same(
    byDigest
      .filter((o) => o.kind === "DaemonSet" || o.kind === "Deployment")
      .map((o) => o.spec.template.spec.containers[0].image),
    [`proxyscope@${digest}`, `proxyscope@${digest}`],
    "a digest pins both workloads by digest",
  );

  // The collector off: exactly its objects go; the agent, the laptop ClusterRole and monitoring stay.
  const noCollector = sorted(helmTemplate({ "collector.enabled": false }));
  t.same(
    base
      .map(id)
      .filter((i) => !noCollector.map(id).includes(i))
      .sort(),
    [
      "ClusterRole/-/proxyscope-collector",
      "ClusterRoleBinding/-/proxyscope-collector",
      "Deployment/proxyscope/proxyscope-collector",
      "Role/kube-system/proxyscope-collector",
      "Role/proxyscope/proxyscope-collector",
      "RoleBinding/kube-system/proxyscope-collector",
      "RoleBinding/proxyscope/proxyscope-collector",
      "Service/proxyscope/proxyscope-collector",
      "ServiceAccount/proxyscope/proxyscope-collector",
      "ServiceMonitor/proxyscope/proxyscope-collector",
    ],
    "the collector's objects and nothing else removed",
  );
  t.strictSame(
    noCollector,
    base.filter((o) => noCollector.some((n) => id(n) === id(o))),
    "what stays is unchanged",
  );

  // Resources, nodeSelector, tolerations: only the agent's pod spec changes.
  const sched = {
    "agent.resources": { requests: { cpu: "100m", memory: "128Mi" }, limits: { memory: "1Gi" } },
    "agent.nodeSelector": { pool: "infra" },
    "agent.tolerations": [{ key: "dedicated", operator: "Equal", value: "infra", effect: "NoSchedule" }],
  };
  const wantSched = structuredClone(base);
  const ps = agent(wantSched).spec.template.spec;
  ps.containers[0].resources = sched["agent.resources"];
  // Helm merges a map given in values into the default one (kubernetes.io/os stays), a list replaces.
  ps.nodeSelector = { "kubernetes.io/os": "linux", ...sched["agent.nodeSelector"] };
  ps.tolerations = sched["agent.tolerations"];
  t.strictSame(sorted(helmTemplate(sched)), wantSched, "agent resources, nodeSelector, tolerations");

  // Another namespace: everything in proxyscope moves, the kube-system grants stay, every reference follows.
  const moved = sorted(helmTemplate({ "namespace.name": "observability", "namespace.create": false }));
  const wantMoved = sorted(
    structuredClone(base)
      .filter((o) => o.kind !== "Namespace")
      .map((o) => {
        if (o.metadata.namespace === "proxyscope") o.metadata.namespace = "observability";
        for (const s of (o.subjects ?? []) as { namespace?: string }[]) s.namespace = "observability";
        if (o.kind === "ServiceMonitor") o.spec.namespaceSelector.matchNames = ["observability"];
        return o;
      }),
  );
  t.strictSame(moved, wantMoved, "namespace.name moves every reference, kube-system stays");
  t.ok(
    moved.some((o) => o.metadata.namespace === "kube-system"),
    "the kube-system Role and RoleBinding are still there",
  );
});

t.test("a bad value is a named error, not a render", async (t) => {
  const r = helmTemplateRun({ "agent.detailFrom": "everyone" });
  t.not(r.status, 0, "helm template refuses");
  t.match(r.stderr, /detailFrom/, `names the value: ${r.stderr.trim()}`);
  const typo = helmTemplateRun({ "collector.enable": false });
  t.not(typo.status, 0, "a misspelt key is refused rather than ignored");
  t.match(typo.stderr, /enable/, `names the key: ${typo.stderr.trim()}`);
  // status.hostIPs (NODE_IPS) is served by default from Kubernetes 1.29 on.
  const old = helm(["template", "proxyscope", CHART, "--kube-version", "1.28.0"]);
  t.not(old.status, 0, "a 1.28 cluster is refused");
  t.match(old.stderr, /kubeVersion: >=1\.29/, old.stderr.trim());
});

t.test("everything the chart renders is valid for the API, with no unknown field", async (t) => {
  const renders = [
    helmTemplate(),
    helmTemplate({ "agent.webConfig.enabled": true, "agent.hostDpkgStatus": false }),
    helmTemplate({
      "image.digest": "sha256:" + "cd".repeat(32),
      "agent.resources": { requests: { cpu: "1", memory: "1Gi" } },
      "agent.tolerations": [{ key: "a", operator: "Exists", effect: "NoExecute" }],
      "namespace.name": "observability",
    }),
  ];
  const all = renders.flat();
  for (const o of all) t.equal(await validateAgainstSchema(o), null, `${id(o)} valid`);
  const diags = unknownFieldDiagnostics(all);
  all.forEach((o, i) => t.equal(diags[i], "", `${id(o)}: no unknown field`));
});

// The chart's `monitoring` values fill the mixin's placeholders as scripts/mixin.mjs does for the same
// config: a user's selector, cluster label, multi-cluster grouping and the opt-in fleet alerts.
t.test(
  "monitoring values render the rules and dashboard scripts/mixin.mjs renders for that config",
  async (t) => {
    const config = {
      agentSelector: 'job="my-agent",namespace="obs"',
      collectorSelector: 'job="my-collector"',
      clusterLabel: "k8s_cluster",
      multiCluster: true,
      fleetAlerts: true,
    };
    const dir = mkdtempSync(join(tmpdir(), "proxyscope-helm-mixin-"));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const r = spawnSync(
      process.execPath,
      [join(ROOT, "scripts/mixin.mjs"), "--config", JSON.stringify(config), "--out", dir],
      { encoding: "utf8" },
    );
    t.equal(r.status, 0, r.stderr);
    const objs = helmTemplate({
      "monitoring.selector.agent": config.agentSelector,
      "monitoring.selector.collector": config.collectorSelector,
      "monitoring.clusterLabel": config.clusterLabel,
      "monitoring.multiCluster": true,
      "monitoring.fleetAlerts": true,
    });
    const rule = objs.find((o) => o.kind === "PrometheusRule")!;
    const want = parse(readFileSync(join(dir, "proxyscope-rules.yaml"), "utf8")) as { groups: unknown[] };
    t.strictSame(rule.spec.groups, want.groups, "the PrometheusRule's groups");
    t.match(JSON.stringify(rule.spec.groups), /proxyscope\.fleet/, "the fleet group is in");
    const cm = objs.find(
      (o) => o.kind === "ConfigMap" && o.metadata.name === "proxyscope-grafana-dashboard",
    )!;
    t.equal(
      cm.data["proxyscope-dashboard.json"],
      readFileSync(join(dir, "proxyscope-dashboard.json"), "utf8"),
      "the dashboard, byte for byte",
    );
    t.notMatch(JSON.stringify(objs), /__[A-Z_]+__/, "no placeholder left");
    // Bad values are refused by the schema, not rendered into broken PromQL.
    const bad = helmTemplateRun({ "monitoring.clusterLabel": "not a label" });
    t.not(bad.status, 0, "a cluster label that is not a label name");
    const braces = helmTemplateRun({ "monitoring.selector.agent": '{job="x"}' });
    t.not(braces.status, 0, "a selector with its own braces");
  },
);
