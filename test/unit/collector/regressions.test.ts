/* eslint-disable no-control-regex -- these tests look for raw control characters on purpose */
// Defects the collector's property tests and fault matrix found, one test each, so a fix cannot
// quietly come undone. Each names the input that used to throw, lie or grow without bound.
import t from "tap";
import { parseKubeProxyConfig } from "../../../collector/parse/kube-proxy-config.js";

t.test("a YAML mapping where kube-proxy expects a string is a typed error, not a throw", async (t) => {
  // String() of {toString: 1} threw a TypeError out of gatherCluster: exit 2, "internal error".
  t.match(parseKubeProxyConfig("mode: {toString: 1}\n"), { ok: false, error: /mode is a mapping/ });
  t.match(parseKubeProxyConfig("mode: [ipvs]\n"), { ok: false, error: /mode is a mapping/ });
  t.match(parseKubeProxyConfig("nodePortAddresses: [{toString: 1}]\n"), {
    ok: false,
    error: /nodePortAddresses holds a mapping/,
  });
  // A self-referencing alias made JSON.stringify throw; a 1 MiB kind became a 1 MiB error.
  t.match(parseKubeProxyConfig("kind: &a [1, *a]\n"), { ok: false, error: /kind is of type object/ });
  const big = parseKubeProxyConfig(`kind: ${"x".repeat(1_000_000)}\n`);
  t.ok(!big.ok && big.error.length < 200, "a bounded error");
  t.match(parseKubeProxyConfig('mode: "nftables"\nnodePortAddresses: [primary, null]\n'), {
    ok: true,
    value: { mode: "nftables", nodePortAddresses: ["primary", "null"] },
  });
});

t.test("a last-scan gauge of NaN, +Inf or far beyond any date is no scan time, not a throw", async (t) => {
  // new Date(NaN).toISOString() threw a RangeError out of gatherFromPrometheus: exit 2, internal error.
  const { observationsFromSeries, queries } = await import("../../../collector/sources/prometheus.js");
  type Q = keyof ReturnType<typeof queries>;
  for (const v of ["NaN", "+Inf", "-Inf", "1e300"]) {
    const results = Object.fromEntries(Object.keys(queries("node")).map((q) => [q, []])) as unknown as Record<
      Q,
      { metric: Record<string, string>; value: [number, string] }[]
    >;
    results.phase = [{ metric: { node: "a", phase: "ipvs" }, value: [1, "1"] }];
    results.lastScan = [{ metric: { node: "a" }, value: [1, v] }];
    const [obs] = observationsFromSeries(results, "node", "http://prom", 1764417600, 900);
    t.equal(obs?.scannedAt, null, `${v}: no scan time`);
    t.equal(obs?.outcome, "ok", `${v}: the node's other facts stay`);
  }
});

t.test("a DaemonSet without a pod template is read, not a throw", async (t) => {
  // ds.spec.template.spec threw a TypeError outside the gap handling: exit 2, internal error.
  const { toKubeProxyDaemonSet } = await import("../../../collector/sources/kubernetes/index.js");
  t.match(toKubeProxyDaemonSet({ metadata: { name: "kube-proxy" }, spec: {} } as never), {
    name: "kube-proxy",
    argv: [],
    image: null,
    configMapVolumes: [],
  });
});

t.test("versions with more digits than any number holds are not versions", async (t) => {
  // Number("9" x 400) is Infinity: the cluster version's minor became null in the JSON report.
  const { kubeMajorMinor: parseKubeVersion, kernelMajorMinor: parseKernelRelease } =
    await import("../../../agent/contract.js");
  t.equal(parseKubeVersion(`v1.${"9".repeat(400)}`), null);
  t.equal(parseKernelRelease(`${"9".repeat(17)}.1-generic`), null);
  t.same(parseKubeVersion("v1.37.2-eks-abc"), { major: 1, minor: 37 });
  t.same(parseKernelRelease(" 6.8.0-51-generic"), { major: 6, minor: 8 });
});

t.test("null entries in an object's lists are skipped, not a throw", async (t) => {
  // The client passes `[null]` through; a.type / p.name / x.name threw outside the gap handling.
  const k = await import("../../../collector/sources/kubernetes/index.js");
  t.match(
    k.toApiNode({ metadata: { name: "n" }, status: { addresses: [null], conditions: [null] } } as never),
    {
      name: "n",
      addresses: [],
      ready: null,
    },
  );
  t.match(k.toApiService({ metadata: { name: "s" }, spec: { ports: [null] } } as never), { ports: [] });
  t.match(
    k.toKubeProxyDaemonSet({
      spec: {
        template: {
          spec: {
            containers: [null, { name: "kube-proxy", command: [null, "--proxy-mode=ipvs"] }],
            volumes: [null],
          },
        },
      },
    } as never),
    { argv: ["--proxy-mode=ipvs"], proxyModeFlag: "ipvs", configMapVolumes: [] },
  );
});

t.test("a target list of millions of bad lines is named by its first ten", async (t) => {
  // Every bad line was an error: 10 MB of one-character lines made 5 million errors (~300 MB) and
  // one error message of all of them, in 9 s.
  const { parseTargets } = await import("../../../collector/sources/static.js");
  const r = parseTargets("a\n".repeat(1_000_000));
  t.equal(r.errors.length, 11);
  t.equal(r.errors[10], "999990 more line(s) like these");
  // A line is named by its number and what is wrong, never quoted: the file may be a secret.
  t.strictSame(parseTargets("s3cret\nn1 http://10.0.0.7:9977\na b s3cret\nhttp://u:s3cret@h/\n"), {
    targets: [{ node: "n1", url: "http://10.0.0.7:9977" }],
    errors: [
      "--agents-file line 1: not an http(s) URL",
      '--agents-file line 3: 3 fields, expected "URL" or "NODE URL"',
      "--agents-file line 4: holds a user name or password (the collector never sends them to an agent)",
    ],
  });
});

t.test("an agent's huge schemaVersion or key is quoted, not copied into the reason", async (t) => {
  // The reason carried the whole value: a 1 MB schemaVersion was a 1 MB note in every renderer.
  const { parseNodeReport } = await import("../../../collector/gather/observe.js");
  const big = "x".repeat(1_000_000);
  for (const body of [
    JSON.stringify({ schemaVersion: big }),
    JSON.stringify({ schemaVersion: "1", [big]: 1 }),
  ]) {
    const r = parseNodeReport(body);
    t.ok(!r.ok && r.reason.length < 500, `${r.ok ? "" : r.reason.length} characters`);
  }
  t.match(parseNodeReport(JSON.stringify({ schemaVersion: "2" })), {
    reason: /schemaVersion "2"; this collector/,
  });
});

t.test("a Prometheus value that is not a number is unknown, not NaN", async (t) => {
  const { observationsFromSeries, queries } = await import("../../../collector/sources/prometheus.js");
  type Q = keyof ReturnType<typeof queries>;
  const results = Object.fromEntries(Object.keys(queries("node")).map((q) => [q, []])) as unknown as Record<
    Q,
    { metric: Record<string, string>; value: [number, string] }[]
  >;
  results.phase = [{ metric: { node: "a", phase: "ipvs" }, value: [1, "1"] }];
  results.virtualServers = [{ metric: { node: "a" }, value: [1, "NaN"] }];
  results.blackHoled = [{ metric: { node: "a" }, value: [1, "\u001b]0;x\u0007"] }];
  results.kubeIpvs0Addresses = [{ metric: { node: "a" }, value: [1, "3"] }];
  t.match(observationsFromSeries(results, "node", "http://prom", 1, 900), [
    { ipvsVirtualServers: null, blackHoledAddresses: null, kubeIpvs0Addresses: 3 },
  ]);
});

t.test("a /version that never answers is a named gap within the deadline, not a hang", async (t) => {
  // getCode(o) passed the deadline as the request parameter: /version had none, and a hung answer held
  // `report` for ever (and `serve`'s gather loop with it).
  const http = await import("node:http");
  const { KubeConfig } = await import("@kubernetes/client-node");
  const { gatherCluster } = await import("../../../collector/sources/kubernetes/index.js");
  const server = http.createServer((req, res) => {
    if (req.url === "/version") return; // accept, never answer
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ kind: "List", apiVersion: "v1", metadata: {}, items: [] }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const port = (server.address() as { port: number }).port;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "c", server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: "u", token: "x" }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x",
  });
  const started = Date.now();
  // The healthy reads share the deadline: 300 ms was missed by them at load 45 (no report at all).
  // The hang is told apart by never answering, so a long deadline only costs this test its length.
  const r = await gatherCluster(kc, {
    timeoutMs: 20_000,
    kubeProxyNamespace: "kube-system",
  });
  t.ok(
    Date.now() - started < 600_000,
    `ended by the deadline, not held for ever: ${Date.now() - started} ms`,
  );
  t.match(r, { ok: true, value: { gaps: [{ what: "/version", reason: "timed out" }] } });
});

t.test("--fail-on unanswered counts a cluster read that failed", async (t) => {
  // A ConfigMap the API would not give (500, 403, a timeout) left the checks that need it unrun, yet
  // the exit code said the report was whole.
  const { reasonsToFail } = await import("../../../collector/report/fail-on.js");
  const r = {
    nodes: [{ node: "a", outcome: "ok" }],
    cluster: { gaps: [{ what: "configmap kube-system/kube-proxy", reason: "HTTP 500" }] },
    clusterFindings: [],
  } as never;
  t.same(reasonsToFail(r, "unanswered"), ["cluster: configmap kube-system/kube-proxy not read"]);
});

t.test("an unread kube-proxy ConfigMap or DaemonSet is not an absent one", async (t) => {
  // A 500 on the ConfigMap made the checks say "mode not pinned", "nodes disagree with the
  // configured iptables" and the plan "mode: is empty"; both unread made it "no kube-proxy".
  const { facts } = await import("../../helpers/fleet.js");
  const { clusterChecks } = await import("../../../collector/rules/index.js");
  const { plan } = await import("../../../collector/plan/plan.js");
  const gap = (what: string) => ({ what, reason: "HTTP 500" });
  const cmUnread = facts({ kubeProxyConfigMap: null, gaps: [gap("configmap kube-system/kube-proxy")] });
  const ids = clusterChecks(cmUnread, [{ node: "a", phase: "ipvs" }]).map((f) => f.id);
  t.notOk(ids.includes("cluster-proxy-mode-not-pinned"));
  t.notOk(ids.includes("cluster-nodes-disagree-with-config"));
  const step1 = plan(cmUnread, [], clusterChecks(cmUnread, []))[0]!;
  t.match(step1, { status: "todo", detail: /could not be read/ });
  const bothUnread = facts({
    kubeProxyConfigMap: null,
    kubeProxyDaemonSet: null,
    gaps: [gap("configmap kube-system/kube-proxy"), gap("daemonset kube-system/kube-proxy")],
  });
  t.notOk(clusterChecks(bothUnread, []).some((f) => f.id === "cluster-no-kube-proxy"));
  // Really absent (404) still is the finding.
  const absent = facts({ kubeProxyConfigMap: null, kubeProxyDaemonSet: null });
  t.ok(clusterChecks(absent, []).some((f) => f.id === "cluster-no-kube-proxy"));
});

t.test(
  "a 404 on the Services list or /version is a named gap; on a named object it is absence",
  async (t) => {
    // Every 404 was "absent": a Services list the API would not serve became "0 Services, 0 NodePorts".
    const http = await import("node:http");
    const { KubeConfig } = await import("@kubernetes/client-node");
    const { gatherCluster } = await import("../../../collector/sources/kubernetes/index.js");
    const server = http.createServer((req, res) => {
      const notFound =
        req.url === "/version" ||
        req.url!.startsWith("/api/v1/services") ||
        /configmaps|daemonsets/.test(req.url!);
      res.writeHead(notFound ? 404 : 200, { "content-type": "application/json" });
      res.end(
        JSON.stringify(
          notFound
            ? {
                kind: "Status",
                apiVersion: "v1",
                status: "Failure",
                reason: "NotFound",
                code: 404,
                message: "not found",
              }
            : { kind: "NodeList", apiVersion: "v1", metadata: {}, items: [] },
        ),
      );
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    t.teardown(() => server.close());
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [
        {
          name: "c",
          server: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
          skipTLSVerify: true,
        },
      ],
      users: [{ name: "u", token: "x" }],
      contexts: [{ name: "x", cluster: "c", user: "u" }],
      currentContext: "x",
    });
    const r = await gatherCluster(kc, {
      timeoutMs: 60_000,
      kubeProxyNamespace: "kube-system",
    });
    t.match(r, { ok: true, value: { kubeProxyConfigMap: null, kubeProxyDaemonSet: null } });
    // The DaemonSet list (the network plugin check's) is a list too: its 404 is a gap, not "no plugin".
    t.same(r.ok && r.value.gaps.map((g) => g.what).sort(), [
      "/version",
      "daemonsets (all namespaces)",
      "services (all namespaces)",
    ]);
    t.equal(r.ok && r.value.daemonSets, null);
  },
);

t.test('a Prometheus answer with status "error" names Prometheus\'s error', async (t) => {
  // It said only 'expected "success"': the errorType and error Prometheus gave were dropped.
  const { parseQueryAnswer } = await import("../../../collector/sources/prometheus.js");
  const r = parseQueryAnswer(
    JSON.stringify({ status: "error", errorType: "bad_data", error: "1:1: parse error" }),
    "up",
  );
  t.match(r, { ok: false, error: 'Prometheus error "bad_data": "1:1: parse error"' });
  const big = parseQueryAnswer(
    JSON.stringify({ status: "error", error: "x".repeat(1e6), errorType: {} }),
    "up",
  );
  t.ok(!big.ok && big.error.length < 400, "bounded");
});

t.test("the table escapes finding ids too", async (t) => {
  // Finding ids went to the terminal raw: an agent (or a Prometheus label) with an id carrying
  // ESC ]0; or a CR could retitle the terminal or overwrite the table's lines.
  const { renderTable } = await import("../../../collector/render/table.js");
  const { rollup } = await import("../../../collector/plan/rollup.js");
  const { failedObservation } = await import("../../../collector/gather/observe.js");
  const r = rollup({
    source: "static",
    collectorVersion: "0.1.0",
    generatedAt: new Date("2026-11-29T12:00:00Z"),
    cluster: null,
    missingOutcome: "no-agent",
    observations: [
      {
        ...failedObservation("n", null, "no-data", ""),
        outcome: "ok",
        reason: null,
        phase: "ipvs",
        verdict: "attention",
        findings: [{ id: "x\u001b]0;pwned\u0007\rforged", severity: "warning" }],
      },
    ],
  });
  const out = renderTable(r, false);
  t.notMatch(out, /[\u001b\u0007\r]/);
  t.match(out, /x\\u001b\]0;pwned\\u0007\\u000dforged/);
});

t.test("serve: a 404 or a bad request quotes nothing from the request", async (t) => {
  // Fastify's default 404 said "Route GET:/<script>alert(1)</script> not found": the URL reflected.
  const { buildServer } = await import("../../../collector/server.js");
  const s = buildServer({
    intervalMs: 3_600_000,
    gather: async () => ({ ok: false, error: "x" }),
    log: () => {},
  });
  t.teardown(() => s.app.close());
  const r = await s.app.inject({ url: "/<script>alert(1)</script>" });
  t.equal(r.statusCode, 404);
  t.equal(r.body, '{"error":"not found"}');
  const bad = await s.app.inject({ url: "/%" });
  t.ok(bad.statusCode >= 400 && bad.statusCode < 500);
  t.notMatch(bad.body, /%/);
});
