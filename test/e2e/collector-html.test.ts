// The HTML fleet report as a person sees it: rendered by headless Chromium (Debian `chromium`) from a
// report the CLI made against the API server STAND-IN and loopback agents serving real agent scans.
// Node names, OS images and labels carry markup; it must come out as text, and no script from data may run.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inflateSync } from "node:zlib";
import t from "tap";
import { freePort } from "../helpers/prometheus.js";
import {
  agentPod,
  collector,
  fleetFlags,
  node,
  realScan,
  startAgent,
  startApiServer,
} from "./collector-fleet.js";
import { spawnOwned } from "../helpers/children.js";
import { CHROMIUM, chromiumFlags } from "../helpers/chromium.js";
import { VERSION } from "../../common/version.js";

if (!existsSync(CHROMIUM)) {
  t.plan(0, "Debian chromium is not installed (apt-get install chromium)");
  process.exit(0);
}

const XSS_NAME = `<img src=x onerror="document.body.setAttribute('data-pwned','name')">`;
const XSS_OS = `</script><script>document.body.setAttribute('data-pwned','os')</script>`;
const XSS_LABEL = `"><svg onload="document.body.setAttribute('data-pwned','label')">`;

const port = await freePort();
const fleet: {
  name: string;
  kernel: string;
  os: string;
  mode: "ipvs" | "nftables" | "iptables";
  ip: string;
  pool: string;
}[] = [
  {
    name: "pool-a-1",
    kernel: "6.8.0-1015-aws",
    os: "Ubuntu 24.04.1 LTS",
    mode: "ipvs",
    ip: "127.0.0.31",
    pool: "pool-a",
  },
  {
    name: "pool-a-2",
    kernel: "6.8.0-1015-aws",
    os: "Ubuntu 24.04.1 LTS",
    mode: "ipvs",
    ip: "127.0.0.32",
    pool: "pool-a",
  },
  {
    name: "pool-b-1",
    kernel: "6.1.0-26-amd64",
    os: "Debian GNU/Linux 12 (bookworm)",
    mode: "nftables",
    ip: "127.0.0.33",
    pool: "pool-b",
  },
  {
    name: "pool-b-2",
    kernel: "6.1.0-26-amd64",
    os: "Debian GNU/Linux 12 (bookworm)",
    mode: "iptables",
    ip: "127.0.0.34",
    pool: "pool-b",
  },
  {
    name: "legacy-1",
    kernel: "4.18.0-553.el8_10.x86_64",
    os: "Red Hat Enterprise Linux 8.10 (Ootpa)",
    mode: "ipvs",
    ip: "127.0.0.35",
    pool: "legacy",
  },
];
const stops: (() => Promise<void>)[] = [];
for (const n of fleet)
  stops.push(await startAgent(n.ip, port, { report: await realScan(n.name, n.kernel, n.mode) }));
t.teardown(() => Promise.all(stops.map((s) => s())));

const api = await startApiServer({
  nodes: [
    ...fleet.map((n) =>
      node({
        name: n.name,
        kernel: n.kernel,
        osImage: n.os,
        labels: { "cloud.google.com/gke-nodepool": n.pool },
      }),
    ),
    node({
      name: XSS_NAME,
      kernel: "5.4.0-216-generic",
      osImage: XSS_OS,
      labels: { "cloud.google.com/gke-nodepool": XSS_LABEL },
    }),
  ],
  pods: [...fleet.map((n, i) => agentPod(n.name, n.ip, i)), agentPod(XSS_NAME, "127.0.0.36", 9)],
});
t.teardown(() => api.stop());

const out = await collector(["report", ...fleetFlags(api.kubeconfig, port), "--output", "html"]);
const dir = mkdtempSync(join(tmpdir(), "proxyscope-html-"));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const page = join(dir, "report.html");
writeFileSync(page, out.stdout);

function chromium(extra: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const args = [...chromiumFlags(t), "--window-size=1400,1000", ...extra, `file://${page}`];
  return new Promise((resolve) => {
    const c = spawnOwned(CHROMIUM, args, { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    c.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
    c.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    c.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

t.test("the page is self-contained and strict", async (t) => {
  t.equal(out.code, 0, out.stderr);
  const html = out.stdout;
  t.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;/);
  // Attribute values blanked first (the renderer always double-quotes them): a node named `<img src=x>`
  // is text inside a value, not an element.
  const tags = html.replace(/"[^"]*"/g, '""');
  t.notMatch(tags, /<[a-z]+\b[^>]*\ssrc=/i, "nothing fetched from anywhere: no element has a src");
  t.notMatch(html, /<link\b/, "no <link> element");
  // The only addresses are links to the findings' pages: navigations a reader chooses, never fetches.
  const hrefs = [...html.matchAll(/<(\w+)[^>]*\bhref="([^"]*)"/g)];
  t.ok(hrefs.length > 0, "the findings link their pages");
  for (const [, tag, href] of hrefs) {
    t.equal(tag, "a", "an href only on a link");
    t.match(
      href,
      // At this release's tag: the page a cited report names says what this version did.
      new RegExp(
        `^https://github\\.com/proxyscope/proxyscope/blob/v${VERSION.replace(/\./g, "\\.")}/docs/findings/[a-z0-9-]+\\.md$`,
      ),
    );
  }
  t.equal((html.match(/<script>/g) ?? []).length, 1, "one script: the page's own");
  const data = /<script type="application\/json" id="fleet-data">([^]*?)<\/script>/.exec(html)?.[1] ?? "";
  t.notMatch(data, /</, "no raw < in the embedded data");
  t.ok(
    JSON.parse(data).nodes.some((n: { node: string }) => n.node === XSS_NAME),
    "the data round-trips",
  );
});

t.test("Chromium renders it: markup from nodes is text, no script from data ran", async (t) => {
  const dom = await chromium(["--dump-dom"]);
  t.equal(dom.code, 0, dom.stderr.slice(-2000));
  t.notMatch(dom.stdout, /<body[^>]*data-pwned/, "no handler or script from data ran");
  t.notMatch(dom.stdout, /<img[^>]*src="x"/, "no <img> element from a node name");
  t.notMatch(dom.stdout, /<svg/, "no <svg> element from a label");
  t.match(
    dom.stdout,
    /&lt;img src=x onerror="document\.body\.setAttribute\('data-pwned','name'\)"&gt;/,
    "the name is shown as text",
  );
  t.match(dom.stdout, /&lt;\/script&gt;&lt;script&gt;/, "the OS image is shown as text");
  t.match(
    dom.stdout,
    /<span class="count" id="shown">6 of 6 nodes<\/span>/,
    "the page's own script ran (filters wired)",
  );
  t.match(dom.stdout, /id="partial"/, "the unanswered node makes the page say partial");
  for (const n of fleet) t.match(dom.stdout, new RegExp(`data-node="${n.name}"`), n.name);
});

t.test("screenshot: the right size and not blank", async (t) => {
  const shot = join(dir, "report.png");
  const r = await chromium([`--screenshot=${shot}`]);
  t.equal(r.code, 0, r.stderr.slice(-2000));
  const png = readFileSync(shot);
  t.same([...png.subarray(1, 4)].map((c) => String.fromCharCode(c)).join(""), "PNG");
  t.equal(png.readUInt32BE(16), 1400, "width");
  t.equal(png.readUInt32BE(20), 1000, "height");
  // Decode the pixels (IDAT, zlib) and count distinct colours: a blank page has one or two.
  const idat: Buffer[] = [];
  for (let off = 8; off < png.length;) {
    const len = png.readUInt32BE(off);
    if (png.toString("ascii", off + 4, off + 8) === "IDAT") idat.push(png.subarray(off + 8, off + 8 + len));
    off += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const colours = new Set<number>();
  const bpp = png[25] === 6 ? 4 : 3;
  const stride = 1 + 1400 * bpp;
  // Filter bytes make exact decoding costlier than needed; sampling unfiltered-sub rows still separates blank from not.
  for (let y = 0; y < 1000; y += 7)
    for (let x = 1; x < stride; x += bpp * 13) colours.add(raw.readUIntBE(y * stride + x, 3));
  t.ok(colours.size > 20, `varied pixels (${colours.size} distinct samples)`);
});
