// The migration-review page as a person uses it, in Debian's headless Chromium driven over the DevTools
// protocol (loopback only): the headline and the "you are here" timeline, a table per node pool, a row that
// opens to its findings with evidence, fix and page, sorting, filtering, the CSV download (the same text
// `-o csv` prints), the print layout, and the Prometheus burn-down. The fleet is realistic (four EKS node
// groups, ipvs / nftables / blocked / black-holed / unanswered nodes), its findings from the agent's rules.
// PROXYSCOPE_SAVE_SCREENSHOT=1 writes the picture the README shows to docs/collector-report.png.
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t from "tap";
import { renderCsv } from "../../collector/render/csv.js";
import { renderHtml } from "../../collector/render/html.js";
import { VERSION } from "../../common/version.js";
import { spawnOwned, stopOwned } from "../helpers/children.js";
import { CHROMIUM, chromiumFlags } from "../helpers/chromium.js";
import { reviewFleet } from "../helpers/review-fleet.js";
import { REPO_ROOT } from "../helpers/uml.js";

if (!existsSync(CHROMIUM)) {
  t.plan(0, "Debian chromium is not installed (apt-get install chromium)");
  process.exit(0);
}

const report = reviewFleet({ history: true });
const dir = mkdtempSync(join(tmpdir(), "proxyscope-review-"));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const page = join(dir, "review.html");
writeFileSync(page, renderHtml(report));
const downloads = join(dir, "downloads");

// Chromium, with its DevTools endpoint on a loopback port it picks and prints.
const child = spawnOwned(
  CHROMIUM,
  [
    ...chromiumFlags(t),
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
    "--window-size=1400,1900",
    "--hide-scrollbars",
    `file://${page}`,
  ],
  { stdio: ["ignore", "ignore", "pipe"] },
);
t.teardown(() => stopOwned(child));
const browserWs = await new Promise<string>((resolve, reject) => {
  let err = "";
  child.stderr!.on("data", (d: Buffer) => {
    err += d.toString();
    const m = /DevTools listening on (ws:\/\/\S+)/.exec(err);
    if (m) resolve(m[1]!);
  });
  child.on("exit", (code) => reject(new Error(`chromium exited ${code}: ${err.slice(-2000)}`)));
});

/** One DevTools session: commands answered by id, events by name. */
function session(url: string) {
  const ws = new WebSocket(url);
  let next = 1;
  const pending = new Map<number, (m: { result?: unknown; error?: unknown }) => void>();
  const waiters: { method: string; pred: (p: never) => boolean; resolve: (p: unknown) => void }[] = [];
  const listeners: { method: string; fn: (p: never) => void }[] = [];
  ws.addEventListener("message", (e) => {
    const m = JSON.parse(String(e.data));
    if (m.id) pending.get(m.id)?.(m);
    else {
      for (const l of listeners.filter((l) => l.method === m.method)) l.fn(m.params as never);
      for (const w of waiters.filter((w) => w.method === m.method && w.pred(m.params as never))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m.params);
      }
    }
  });
  const open = new Promise((r) => ws.addEventListener("open", r));
  return {
    async send<T = unknown>(method: string, params: object = {}): Promise<T> {
      await open;
      const id = next++;
      return new Promise((resolve, reject) => {
        pending.set(id, (m) =>
          m.error ? reject(new Error(JSON.stringify(m.error))) : resolve(m.result as T),
        );
        ws.send(JSON.stringify({ id, method, params }));
      });
    },
    event<P>(method: string, pred: (p: P) => boolean = () => true): Promise<P> {
      return new Promise((resolve) =>
        waiters.push({ method, pred: pred as never, resolve: resolve as never }),
      );
    },
    on<P>(method: string, fn: (p: P) => void) {
      listeners.push({ method, fn: fn as never });
    },
    close: () => ws.close(),
  };
}

const browser = session(browserWs);
t.teardown(() => browser.close());
const targets = await browser.send<{ targetInfos: { targetId: string; type: string; url: string }[] }>(
  "Target.getTargets",
);
const target = targets.targetInfos.find((x) => x.type === "page" && x.url.startsWith("file://"));
if (!target) throw new Error(`no page target: ${JSON.stringify(targets)}`);
const port = new URL(browserWs).port;
const tab = session(`ws://127.0.0.1:${port}/devtools/page/${target.targetId}`);
t.teardown(() => tab.close());
await tab.send("Page.enable");
await tab.send("Runtime.enable");
const errors: string[] = [];
tab.on<{ entry: { level: string; text: string } }>("Log.entryAdded", (p) => {
  if (p.entry.level === "error") errors.push(p.entry.text);
});
tab.on<{ type: string; args: { value?: unknown }[] }>("Runtime.consoleAPICalled", (p) => {
  if (p.type === "error") errors.push(JSON.stringify(p.args));
});
await tab.send("Log.enable");
// What happened before Log.enable (a CSP refusal at load) is replayed by reloading once with it on.
const loaded = tab.event("Page.loadEventFired");
await tab.send("Page.reload");
await loaded;

async function js<T>(expression: string): Promise<T> {
  const r = await tab.send<{ result: { value: T }; exceptionDetails?: unknown }>("Runtime.evaluate", {
    expression,
    returnByValue: true,
    awaitPromise: true,
  });
  if (r.exceptionDetails) throw new Error(`${expression}: ${JSON.stringify(r.exceptionDetails)}`);
  return r.result.value;
}

t.test("the page's own script ran under its CSP", async (t) => {
  // Inline scripts run before the load event: by now the script has wired the filters and written the count.
  t.equal(
    await js(`document.getElementById('shown').textContent`),
    `${report.nodes.length} of ${report.nodes.length} nodes`,
  );
});

t.test("the headline: share off ipvs, blocked, and where the version stands", async (t) => {
  const s = report.summary;
  const off = (s.byPhase["nftables"] ?? 0) + (s.byPhase["iptables"] ?? 0) + (s.byPhase["none"] ?? 0);
  t.equal(off, 6, "the fleet has six nodes off ipvs");
  const head = await js<string>(`document.getElementById('headline').innerText`);
  t.match(head, `${Math.round((100 * off) / s.nodes)}%`, "the share off ipvs");
  t.match(head, `of ${s.nodes} nodes off ipvs`);
  t.match(head, /\b2\s+blocked/, "two blocked (the Amazon Linux 2 pool, kernel 5.10)");
  t.match(head, /you are here\s+v1\.37\.2-eks-3fa1c2d/i, "you are here, at the cluster's version");
  for (const v of ["1.35", "1.37", "1.40", "1.43"]) t.match(head, v, `the ${v} stage is drawn`);
  // "You are here" sits on 1.37's mark: their centres line up on the axis.
  const [here, stage] = await js<number[]>(`(() => {
    const c = (e) => { const b = e.getBoundingClientRect(); return b.left + b.width / 2; };
    const stages = [...document.querySelectorAll('.stage')];
    return [c(document.querySelector('.here')), c(stages.find((s) => s.textContent.startsWith('1.37')))];
  })()`);
  t.ok(Math.abs(here! - stage!) < 2, `the marker is at 1.37 (${here} vs ${stage})`);
});

t.test("a table per pool, each row opening to its findings", async (t) => {
  const pools = await js<string[]>(
    `[...document.querySelectorAll('section.pool h2')].map((h) => h.textContent)`,
  );
  t.same(
    pools.map((p) => p.split(" · ")[0]),
    ["batch-bottlerocket", "legacy-al2", "system-al2023", "web-al2023"],
    "one table per EKS node group",
  );
  const node = "ip-10-20-4-12.eu-west-1.compute.internal";
  t.equal(
    await js(`document.querySelector('tr.node[data-node="${node}"]').nextElementSibling.hidden`),
    true,
    "closed at first",
  );
  await js(`document.querySelector('tr.node[data-node="${node}"]').click()`);
  const open = await js<{ hidden: boolean; text: string; links: string[] }>(`(() => {
    const d = document.querySelector('tr.node[data-node="${node}"]').nextElementSibling;
    return { hidden: d.hidden, text: d.innerText, links: [...d.querySelectorAll('a')].map((a) => a.href) };
  })()`);
  t.equal(open.hidden, false, "a click opens it");
  t.match(open.text, "kube-ipvs0-black-hole");
  t.match(open.text, "172.20.118.42", "the evidence: each black-holed address");
  t.match(open.text, /fix: .*ip link delete kube-ipvs0/, "the fix");
  t.same(
    open.links,
    [`https://github.com/proxyscope/proxyscope/blob/v${VERSION}/docs/findings/kube-ipvs0-black-hole.md`],
    "the page",
  );
});

t.test("sorting by a column", async (t) => {
  const order = () =>
    js<string[]>(
      `[...document.querySelectorAll('#pool-4 tr.node')].map((r) => r.getAttribute('data-verdict'))`,
    );
  t.same(await order(), ["clean", "clean", "unhealthy", "ready", "ready"], "as the rollup lists them");
  await js(`document.querySelector('#pool-4 th button[data-col="2"]').click()`);
  t.same(await order(), ["unhealthy", "ready", "ready", "clean", "clean"], "verdict, worst first");
  await js(`document.querySelector('#pool-4 th button[data-col="2"]').click()`);
  t.same(await order(), ["clean", "clean", "ready", "ready", "unhealthy"], "and back");
  const pairs = await js<boolean>(
    `[...document.querySelectorAll('#pool-4 tr.node')].every((r) => r.nextElementSibling.classList.contains('detail'))`,
  );
  t.ok(pairs, "each row keeps its findings row beneath it");
});

t.test("filtering across the pools", async (t) => {
  await js(
    `(() => { const s = document.getElementById('f-verdict'); s.value = 'blocked'; s.dispatchEvent(new Event('change')); })()`,
  );
  t.equal(await js(`document.getElementById('shown').textContent`), `2 of ${report.nodes.length} nodes`);
  await js(
    `(() => { const s = document.getElementById('f-verdict'); s.value = ''; s.dispatchEvent(new Event('change')); })()`,
  );
  t.equal(
    await js(`document.getElementById('shown').textContent`),
    `${report.nodes.length} of ${report.nodes.length} nodes`,
  );
});

t.test("the CSV download is the text -o csv prints", async (t) => {
  await browser.send("Browser.setDownloadBehavior", {
    behavior: "allow",
    downloadPath: downloads,
    eventsEnabled: true,
  });
  const done = browser.event<{ state: string; guid: string }>(
    "Browser.downloadProgress",
    (p) => p.state !== "inProgress",
  );
  await js(`document.getElementById('csv').click()`);
  const p = await done;
  t.equal(p.state, "completed");
  const file = join(downloads, "proxyscope-fleet.csv");
  const csv = existsSync(file) ? readFileSync(file, "utf8") : readFileSync(join(downloads, p.guid), "utf8");
  t.equal(csv, renderCsv(report), "byte for byte");
  t.equal(csv.split("\r\n").length - 2, report.nodes.length, "a row per node");
});

t.test("the burn-down from Prometheus history", async (t) => {
  const cols = await js<number>(`document.querySelectorAll('#burn-down .col').length`);
  t.equal(cols, report.history!.length, "a column per sample");
  t.match(await js<string>(`document.getElementById('burn-down').innerText`), "nodes in ipvs mode: 13 → 6");
});

t.test("the print layout", async (t) => {
  await tab.send("Emulation.setEmulatedMedia", { media: "print" });
  const r = await js<{ actions: string; filters: string; bg: string }>(`({
    actions: getComputedStyle(document.querySelector('.actions')).display,
    filters: getComputedStyle(document.querySelector('div.filters')).display,
    bg: getComputedStyle(document.body).backgroundColor })`);
  t.same(
    r,
    { actions: "none", filters: "none", bg: "rgb(255, 255, 255)" },
    "no buttons or filters, white paper",
  );
  await tab.send("Emulation.setEmulatedMedia", { media: "" });
});

t.test("the picture for the README", async (t) => {
  // One node opened, as a reviewer would: a blocked node of the Amazon Linux 2 pool, near the top.
  await js(`document.querySelector('tr.node[data-node="ip-10-20-12-8.eu-west-1.compute.internal"]').click()`);
  await js(`window.scrollTo(0, 0)`);
  const shot = await tab.send<{ data: string }>("Page.captureScreenshot", { format: "png" });
  const png = Buffer.from(shot.data, "base64");
  t.same([...png.subarray(1, 4)].map((c) => String.fromCharCode(c)).join(""), "PNG");
  t.equal(png.readUInt32BE(16), 1400, "width");
  t.ok(png.length > 100_000, `a picture with content (${png.length} bytes)`);
  t.same(errors, [], "no console errors (a CSP refusal would be one)");
  const out = join(dir, "review.png");
  writeFileSync(out, png);
  if (process.env.PROXYSCOPE_SAVE_SCREENSHOT) copyFileSync(out, join(REPO_ROOT, "docs/collector-report.png"));
});
