// `proxyscope scan-node NODE` against the API server STAND-IN (test/standins/apiserver.ts with its pod
// writes and scripted kubelet, apiserver-pods.ts): one privileged pod made as `kubectl debug node/NODE
// --profile=sysadmin` makes it, waited for by a watch, its log read through pods/log and judged as a
// NodeReport, and the pod deleted on every way out: success, a failed scan, a garbage log, a container
// that cannot start, a log RBAC refuses, the wait's deadline, and SIGTERM mid-wait.
import t, { type Test } from "tap";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { NodeReport } from "../../agent/report/schema.js";
import { spawnOwned, stopOwned } from "../helpers/children.js";
import { recordedIpvsNode } from "../helpers/recorded-node.js";
import { APISERVER, COLLECTOR_CLI, fixture, node, run, writeKubeconfig } from "./collector-fleet.js";
import { agentBuilt } from "./agent-process.js";
import { SCAN_POD_LABELS } from "../../collector/sources/scan-pod.js";
import type { PodRun } from "../standins/apiserver-pods.js";

const skip = !agentBuilt() && "run npm run build first";
const TOKEN = "stand-in-token";

interface Api {
  kubeconfig: string;
  url: string;
  /** The next `pod-created`/`pod-deleted` line's NS/NAME. */
  next(kind: "pod-created" | "pod-deleted"): Promise<string>;
  seen: { created: string[]; deleted: string[] };
}

async function startApi(t: Test, podRuns: Record<string, PodRun>, forbidden: string[] = []): Promise<Api> {
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-scan-node-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "cluster.json");
  writeFileSync(
    file,
    JSON.stringify({
      token: TOKEN,
      version: fixture("version.json"),
      nodes: ["node-a", "node-b"].map((name) =>
        node({ name, kernel: "6.1.0-18-amd64", osImage: "Debian 12" }),
      ),
      pods: [],
      configMaps: [],
      daemonSets: [],
      services: [],
      forbidden,
      podRuns,
    }),
  );
  const child = spawnOwned(process.execPath, [APISERVER, file], { stdio: ["ignore", "pipe", "inherit"] });
  t.teardown(() => stopOwned(child));
  const seen = { created: [] as string[], deleted: [] as string[] };
  const waiters: { kind: string; resolve: (v: string) => void }[] = [];
  let ready: (port: number) => void = () => {};
  const port = new Promise<number>((r) => (ready = r));
  void (async () => {
    for await (const line of createInterface({ input: child.stdout! })) {
      const m = /^(ready|pod-created|pod-deleted) (\S+)$/.exec(line);
      if (!m) continue;
      if (m[1] === "ready") ready(Number(m[2]));
      else {
        (m[1] === "pod-created" ? seen.created : seen.deleted).push(m[2]!);
        const i = waiters.findIndex((w) => w.kind === m[1]);
        if (i >= 0) waiters.splice(i, 1)[0]!.resolve(m[2]!);
      }
    }
  })();
  const url = `http://127.0.0.1:${await port}`;
  return {
    kubeconfig: writeKubeconfig(dir, url, TOKEN),
    url,
    seen,
    next: (kind) => new Promise((resolve) => waiters.push({ kind, resolve })),
  };
}

const ENV = { NO_COLOR: "1", KUBERNETES_SERVICE_HOST: "", KUBECONFIG: "" };
const scanNode = (api: Api, args: string[]) =>
  run(
    process.execPath,
    [COLLECTOR_CLI, "scan-node", ...args, "--kubeconfig", api.kubeconfig, "--timeout-ms", "60000"],
    ENV,
  );

const getPod = async (api: Api, nsName: string) => {
  const [ns, name] = nsName.split("/");
  const r = await fetch(`${api.url}/api/v1/namespaces/${ns}/pods/${name}`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  return { status: r.status, body: (await r.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
};

/** Every pod the stand-in saw created was deleted, and the API no longer has it. */
async function allDeleted(t: Test, api: Api) {
  t.ok(api.seen.created.length > 0, "a pod was created");
  t.same([...api.seen.deleted].sort(), [...api.seen.created].sort(), "every pod created was deleted");
  for (const p of api.seen.created) t.equal((await getPod(api, p)).status, 404, `${p} is gone`);
}

// A real report's shape (the recorded ipvs node), as `scan -o json` prints it, after a stderr line.
const report = { ...recordedIpvsNode(), node: "node-a" };
const goodLog = `proxyscope-agent: note: a line on stderr, interleaved by the kubelet\n${JSON.stringify(report, null, 2)}\n`;

t.test("scan-node prints the pod's report and deletes the pod", { skip }, async (t) => {
  const api = await startApi(t, { "node-a": { phase: "Succeeded", log: goodLog } });
  const json = await scanNode(api, ["node-a", "-o", "json"]);
  t.equal(json.code, 0, json.stderr);
  const got = NodeReport.parse(JSON.parse(json.stdout));
  t.equal(got.node, "node-a");
  t.equal(got.verdict, report.verdict, "the agent's verdict, as its log said");
  t.match(json.stderr, /scanning node node-a with pod default\/proxyscope-scan-node-a-[0-9a-f]{5}/);
  const text = await scanNode(api, ["node/node-a"]);
  t.equal(text.code, 0, text.stderr);
  t.match(text.stdout, /node-a/, "the agent's text rendering");
  t.equal(api.seen.created.length, 2, "one pod a run");
  t.not(api.seen.created[0], api.seen.created[1], "a unique name each run");
  await allDeleted(t, api);
});

t.test("a scan that fails is named with its exit and its log", { skip }, async (t) => {
  const api = await startApi(t, {
    "node-a": { phase: "Failed", exitCode: 3, log: "proxyscope-agent: internal error: boom\n" },
  });
  const r = await scanNode(api, ["node-a"]);
  t.equal(r.code, 5, "no report");
  t.match(r.stderr, /the scan exited 3 \(Error\); its log: .*internal error: boom/);
  t.equal(r.stdout, "");
  await allDeleted(t, api);
});

t.test("a log that is not a node report is a named error", { skip }, async (t) => {
  const api = await startApi(t, {
    "node-a": { phase: "Succeeded", log: "exec /usr/local/bin/proxyscope-agent: exec format error\n" },
    "node-b": { phase: "Succeeded", log: JSON.stringify({ schemaVersion: report.schemaVersion, node: 7 }) },
  });
  const a = await scanNode(api, ["node-a"]);
  t.equal(a.code, 5);
  t.match(a.stderr, /its log is not a node report \(garbage: /);
  const b = await scanNode(api, ["node-b"]);
  t.equal(b.code, 5);
  t.match(b.stderr, /its log is not a node report \(garbage: not a NodeReport: /);
  t.equal(a.stdout + b.stdout, "", "nothing printed as a report");
  await allDeleted(t, api);
});

t.test("a container that cannot start ends the wait at once", { skip }, async (t) => {
  const api = await startApi(t, { "node-a": { phase: "Succeeded", waiting: "ErrImagePull" } });
  // A wide deadline: only the container's state can end this run before it.
  const r = await scanNode(api, [
    "node-a",
    "--image",
    "registry.invalid/proxyscope:nope",
    "--wait-s",
    "3600",
  ]);
  t.equal(r.code, 5);
  t.match(r.stderr, /cannot start: ErrImagePull/);
  await allDeleted(t, api);
});

t.test("a log RBAC refuses names the permission, and the pod is deleted", { skip }, async (t) => {
  const api = await startApi(t, { "node-a": { phase: "Succeeded", log: goodLog } }, ["pods/log"]);
  const r = await scanNode(api, ["node-a"]);
  t.equal(r.code, 5);
  t.match(r.stderr, /cannot read the scan pod's log: HTTP 403.*needs get on pods\/log/);
  await allDeleted(t, api);
});

t.test("no such node: no pod", { skip }, async (t) => {
  const api = await startApi(t, {});
  const r = await scanNode(api, ["node-zzz"]);
  t.equal(r.code, 5);
  t.match(r.stderr, /no node "node-zzz"/);
  t.same(api.seen.created, [], "nothing created");
});

t.test("a pod that never ends is deleted at --wait-s", { skip }, async (t) => {
  const api = await startApi(t, {}); // node-a exists, its kubelet never starts the pod
  const r = await scanNode(api, ["node-a", "--wait-s", "2"]);
  t.equal(r.code, 5);
  t.match(r.stderr, /did not end within 2 s/);
  await allDeleted(t, api);
});

t.test("SIGTERM mid-wait deletes the pod; the pod is the sysadmin debug pod", { skip }, async (t) => {
  const api = await startApi(t, { "node-b": { phase: "Running", log: "scanning\n" } });
  const created = api.next("pod-created");
  const child = spawnOwned(
    process.execPath,
    [
      COLLECTOR_CLI,
      "scan-node",
      "node-b",
      "--kubeconfig",
      api.kubeconfig,
      "--timeout-ms",
      "60000",
      "-n",
      "ops",
    ],
    { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...ENV } },
  );
  t.teardown(() => stopOwned(child));
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
  const name = await created;
  t.match(name, /^ops\/proxyscope-scan-node-b-/);
  const { status, body: pod } = await getPod(api, name);
  t.equal(status, 200);
  const spec = pod.spec;
  t.equal(spec.nodeName, "node-b", "pinned to the node");
  t.equal(spec.hostNetwork, true);
  t.equal(spec.hostPID, true);
  t.equal(spec.restartPolicy, "Never");
  t.same(spec.tolerations, [{ operator: "Exists" }], "tolerates every taint");
  t.same(pod.metadata.labels, SCAN_POD_LABELS);
  const c = spec.containers[0];
  t.same(c.args, ["scan", "--node", "node-b", "--host-root", "/host", "-o", "json"]);
  t.equal(c.securityContext.privileged, true);
  t.same(
    c.volumeMounts,
    [{ name: "host-root", mountPath: "/host", readOnly: true }],
    "the host's / read-only",
  );
  t.same(spec.volumes, [{ name: "host-root", hostPath: { path: "/" } }]);
  t.match(c.image, /^ghcr\.io\/proxyscope\/proxyscope:\d+\.\d+\.\d+/, "the released image by default");
  // Its pod is Running and never ends: only the signal ends this wait.
  const deleted = api.next("pod-deleted");
  child.kill("SIGTERM");
  t.equal(await deleted, name, "the pod deleted");
  t.equal(await exited, 5, stderr);
  t.match(stderr, /SIGTERM: deleting the scan pod/);
  t.match(stderr, /stopped by SIGTERM/);
  await allDeleted(t, api);
});

t.test("scan-node's operand is checked before anything is read", { skip }, async (t) => {
  const none = await run(process.execPath, [COLLECTOR_CLI, "scan-node"], ENV);
  t.equal(none.code, 2);
  t.match(none.stderr, /needs the node's name/);
  const two = await run(process.execPath, [COLLECTOR_CLI, "scan-node", "a", "b"], ENV);
  t.equal(two.code, 2);
  t.match(two.stderr, /takes one node/);
});
