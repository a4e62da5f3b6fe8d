import t, { type Test } from "tap";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { ChildProcess } from "node:child_process";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnOwned, stopOwned } from "../../helpers/children.js";
import { APISERVER } from "../../helpers/real-kube-proxy.js";
import { realCluster } from "../../helpers/real-cluster.js";

// The API server stand-in as client-go's reflectors use it (the real kube-proxy runs against it in
// test/kernel/real-kube-proxy-netns.test.ts): list with kube-proxy's selectors, then watch, in the
// shapes of apimachinery's watch.Event stream.

async function start(t: Test): Promise<string> {
  return (await startChild(t)).base;
}

async function startChild(t: Test): Promise<{ base: string; child: ChildProcess }> {
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-apiwatch-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const cluster = realCluster("v1.34.4") as { services: object[] };
  // A headless Service and one for another proxy: kube-proxy's selectors leave both out.
  cluster.services.push(
    { metadata: { name: "headless", namespace: "default" }, spec: { clusterIP: "None" } },
    {
      metadata: {
        name: "other",
        namespace: "default",
        labels: { "service.kubernetes.io/service-proxy-name": "x" },
      },
      spec: { clusterIP: "10.96.0.99" },
    },
  );
  writeFileSync(join(dir, "c.json"), JSON.stringify({ token: null, ...cluster }));
  const child = spawnOwned(process.execPath, [APISERVER, join(dir, "c.json")], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  t.teardown(() => stopOwned(child));
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout?.on("data", (d: Buffer) => {
      const m = /ready (\d+)/.exec(d.toString());
      if (m) resolve(m[1]!);
    });
    child.once("exit", (c) => reject(new Error(`stand-in exited ${c}`)));
  });
  return { base: `http://127.0.0.1:${port}`, child };
}

/** The first `n` newline-delimited JSON events of a watch, then the connection is dropped. */
function events(
  url: string,
  n: number,
): Promise<{ status: number; type: string; events: Record<string, unknown>[] }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { accept: "application/json" } }, (res) => {
      let buf = "";
      const got: Record<string, unknown>[] = [];
      res.on("data", (d: Buffer) => {
        buf += d.toString();
        let i;
        while ((i = buf.indexOf("\n")) >= 0) {
          got.push(JSON.parse(buf.slice(0, i)) as Record<string, unknown>);
          buf = buf.slice(i + 1);
        }
        if (got.length >= n) {
          req.destroy();
          resolve({ status: res.statusCode ?? 0, type: String(res.headers["content-type"]), events: got });
        }
      });
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, type: String(res.headers["content-type"]), events: got }),
      );
    });
    req.on("error", reject);
  });
}

const SVC_SELECTORS =
  "labelSelector=" +
  encodeURIComponent("!service.kubernetes.io/headless,!service.kubernetes.io/service-proxy-name") +
  "&fieldSelector=" +
  encodeURIComponent("spec.clusterIP!=None");

t.test("list with kube-proxy's selectors, anonymous", async (t) => {
  const base = await start(t);
  const r = await fetch(`${base}/api/v1/services?${SVC_SELECTORS}&limit=500&resourceVersion=0`);
  t.equal(r.status, 200);
  const body = (await r.json()) as {
    kind: string;
    metadata: { resourceVersion: string };
    items: { metadata: { name: string } }[];
  };
  t.equal(body.kind, "ServiceList");
  t.ok(body.metadata.resourceVersion);
  t.same(
    body.items.map((s) => s.metadata.name).sort(),
    ["lb", "np", "web"],
    "headless and other-proxy Services left out",
  );
  const nodes = (await (
    await fetch(`${base}/api/v1/nodes?fieldSelector=${encodeURIComponent("metadata.name=proxyscope-node")}`)
  ).json()) as { items: unknown[] };
  t.equal(nodes.items.length, 1);
  const none = (await (
    await fetch(`${base}/api/v1/nodes?fieldSelector=${encodeURIComponent("metadata.name=elsewhere")}`)
  ).json()) as { items: unknown[] };
  t.equal(none.items.length, 0);
  // kube-proxy before v1.33 GETs its own Node first.
  const own = await fetch(`${base}/api/v1/nodes/proxyscope-node`);
  t.equal(own.status, 200);
  t.match(await own.json(), { kind: "Node", apiVersion: "v1", metadata: { name: "proxyscope-node" } });
  t.equal((await fetch(`${base}/api/v1/nodes/elsewhere`)).status, 404);
  const cidrs = (await (await fetch(`${base}/apis/networking.k8s.io/v1/servicecidrs`)).json()) as {
    kind: string;
    items: unknown[];
  };
  t.match(cidrs, {
    kind: "ServiceCIDRList",
    items: [{ spec: { cidrs: ["10.96.0.0/16", "fd00:96::/112"] } }],
  });
});

t.test("watch from a resourceVersion: no event while nothing changes, ended at timeoutSeconds", async (t) => {
  const base = await start(t);
  const r = await events(
    `${base}/api/v1/services?${SVC_SELECTORS}&watch=true&resourceVersion=4711&allowWatchBookmarks=true&timeoutSeconds=1`,
    1,
  );
  t.equal(r.status, 200);
  t.equal(r.type, "application/json");
  t.same(r.events, [], "nothing changed: the watch ends at its timeout with no event");
});

t.test(
  "WatchList: sendInitialEvents gives ADDED per object, then the initial-events-end BOOKMARK",
  async (t) => {
    const base = await start(t);
    const r = await events(
      `${base}/apis/discovery.k8s.io/v1/endpointslices?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`,
      5,
    );
    t.same(
      r.events.map((e) => e.type),
      ["ADDED", "ADDED", "ADDED", "ADDED", "BOOKMARK"],
    );
    t.match(r.events[0], {
      object: { kind: "EndpointSlice", apiVersion: "discovery.k8s.io/v1", addressType: "IPv4" },
    });
    t.match(r.events[4], {
      object: {
        kind: "EndpointSlice",
        apiVersion: "discovery.k8s.io/v1",
        metadata: { resourceVersion: "4711", annotations: { "k8s.io/initial-events-end": "true" } },
      },
    });
  },
);

t.test("kube-proxy's Events are accepted", async (t) => {
  const base = await start(t);
  const r = await fetch(`${base}/apis/events.k8s.io/v1/namespaces/default/events`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ kind: "Event", apiVersion: "events.k8s.io/v1", reason: "Starting" }),
  });
  t.equal(r.status, 201);
  t.match(await r.json(), { reason: "Starting" });
});

t.test("SIGTERM with a watch open: the stand-in ends the stream and exits by itself", async (t) => {
  const { base, child } = await startChild(t);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  // A watch with no timeoutSeconds and no event to send: only the stand-in's shutdown can end it. The
  // head comes at once, as the API server flushes it: the watch is open before the first event.
  const res = await new Promise<http.IncomingMessage>((resolve, reject) =>
    http.get(`${base}/api/v1/services?watch=true&allowWatchBookmarks=true`, resolve).once("error", reject),
  );
  t.equal(res.statusCode, 200, "the watch is open");
  let ended = false;
  let cut: string | null = null;
  res.on("end", () => (ended = true));
  res.on("error", (e) => (cut = e.message));
  res.resume();
  const closed = new Promise<void>((resolve) => res.once("close", () => resolve()));
  child.kill("SIGTERM");
  await closed;
  t.same({ ended, cut }, { ended: true, cut: null }, "the stream ended with its last chunk, not cut");
  t.same(await exited, { code: 0, signal: null }, "exited 0 on its own, not killed");
});
