/* eslint-disable no-control-regex -- these tests look for raw control characters on purpose */
// Security of what the collector shows and serves. Renderers: property tests with hostile node names,
// labels, kernels, OS images, reasons, finding titles/evidence/remedies, parity states and lost
// Services, cluster version, mode and gaps; the assertions are on output structure — no control character but the table's own SGR, no
// Markdown row with a column too many, no tag, attribute or script in the HTML that the template did
// not write. Server: only GET/HEAD on its four paths, nothing reflected, header and body limits, and
// no request (query, header, path) can make it fetch anything.
import http from "node:http";
import net from "node:net";
import fc from "fast-check";
import t from "tap";
import { renderHtml } from "../../../collector/render/html.js";
import { renderMarkdown } from "../../../collector/render/markdown.js";
import { renderTable } from "../../../collector/render/table.js";
import { rollup } from "../../../collector/plan/rollup.js";
import type { ApiNode } from "../../../collector/report/cluster-facts.js";
import type { FleetReport, NodeObservation } from "../../../collector/report/schema.js";
import { buildServer } from "../../../collector/server.js";
import { failedObservation } from "../../../collector/gather/observe.js";
import { FUZZ_RUNS, HOSTILE_STRINGS } from "../../helpers/fuzz.js";
import { autolinkIn, splitCodeSpans } from "../../helpers/gfm.js";
import { facts } from "../../helpers/fleet.js";

const MARKUP = [
  "</script><script>alert(1)</script>",
  "<img src=x onerror=alert(1)>",
  '" onmouseover="alert(1)',
  "' autofocus onfocus='alert(1)",
  "javascript:alert(1)",
  "<!--",
  "<![CDATA[",
  "</style><style>*{}</style>",
  "<a href=javascript:alert(1)>x</a>",
  "`code` | cell | **b** [l](javascript:alert(1)) <b>",
  "\u001b[31mred\u001b[0m\u001b]8;;http://e/\u0007l\u001b]8;;\u0007\u009b2J\r\u001b[2K",
  "\u2028\u2029\u202e",
];
// Short hostile strings (the 100 kB ones are for parsers), random text, and markup glued to them.
const text = fc.oneof(
  fc.constantFrom(...MARKUP, ...HOSTILE_STRINGS.filter((s) => s.length < 200)),
  fc.string({ unit: "binary", maxLength: 30 }),
  fc.tuple(fc.constantFrom(...MARKUP), fc.string({ maxLength: 8 })).map(([a, b]) => a + b),
);

const hostileReport: fc.Arbitrary<FleetReport> = fc
  .record({
    names: fc.uniqueArray(text, { minLength: 1, maxLength: 4 }),
    label: fc.tuple(text, text),
    kernel: text,
    os: text,
    reason: text,
    title: text,
    evidence: text,
    remedy: text,
    mode: text,
    gitVersion: text,
    gap: fc.tuple(text, text),
    image: text,
  })
  .map((h) => {
    const apiNodes: ApiNode[] = h.names.map((name) => ({
      name,
      kubeletVersion: h.gitVersion,
      kernelVersion: h.kernel,
      osImage: h.os,
      addresses: [{ type: "InternalIP", address: h.reason }],
      labels: { [h.label[0]]: h.label[1], agentpool: h.label[1] },
      ready: true,
      unschedulable: false,
      providerID: h.reason,
    }));
    const obs: NodeObservation[] = h.names.map((node, i) =>
      i % 2 === 1
        ? failedObservation(node, h.reason, "garbage", h.reason)
        : {
            ...failedObservation(node, h.reason, "no-data", ""),
            outcome: "ok",
            reason: h.reason,
            phase: "ipvs",
            verdict: "attention",
            failedProbes: [h.title],
            // Parity: a hostile parity state and lost address (a Service name from a node or the API).
            parity: {
              state: h.title,
              snapshotAgeSeconds: 60,
              counts: { same: 1, missingAfter: 1, endpointsDiffer: 0, newAfter: 0 },
              lost: [h.evidence],
            },
            unknownToCollector: [`finding ${h.title}`],
            findings: [
              {
                id: h.title,
                severity: "warning",
                title: h.title,
                evidence: { [h.evidence]: h.evidence, list: [h.remedy] },
                remedy: h.remedy,
              },
            ],
          },
    );
    const cluster = facts({ nodes: apiNodes, gaps: [{ what: h.gap[0], reason: h.gap[1] }] });
    cluster.version = { gitVersion: h.gitVersion, major: 1, minor: 37 };
    cluster.kubeProxyConfigMap!.config!.mode = h.mode;
    cluster.kubeProxyDaemonSet!.image = h.image;
    return rollup({
      source: "agents",
      collectorVersion: "0.1.0",
      generatedAt: new Date("2026-11-29T12:00:00Z"),
      cluster,
      observations: [...obs, { ...obs[0]!, node: `${h.names[0]}${h.title}` }],
      missingOutcome: "no-agent",
    });
  });

const opts = { numRuns: FUZZ_RUNS, endOnFailure: true };
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

t.test("table: no control character from data, only the table's own SGR; one line a node", async (t) => {
  fc.assert(
    fc.property(hostileReport, fc.boolean(), (r, colour) => {
      const out = renderTable(r, colour);
      // Colour: only `ESC [ digits ; m`; take those out and nothing else may control the terminal.
      const plain = colour ? out.replace(/\u001b\[[0-9;]*m/g, "") : out;
      const bad = CONTROL.exec(plain);
      if (bad) throw new Error(`control U+${bad[0].charCodeAt(0).toString(16)} at ${bad.index}`);
      const lines = plain.split("\n");
      const start = lines.indexOf("NODES");
      const end = lines.findIndex((l, i) => i > start && l === "");
      const rows = (end === -1 ? lines.slice(start + 1) : lines.slice(start + 1, end)).length;
      if (rows !== r.nodes.length + 1) throw new Error(`${rows} table lines for ${r.nodes.length} nodes`);
    }),
    opts,
  );
  t.pass();
});

t.test(
  "Markdown: no raw markup, backtick or control character; every row has its table's columns",
  async (t) => {
    fc.assert(
      fc.property(hostileReport, (r) => {
        const out = renderMarkdown(r);
        const bad = CONTROL.exec(out);
        if (bad) throw new Error(`control U+${bad[0].charCodeAt(0).toString(16)}`);
        // Code spans (what could be an autolink is shown as code) and escapes (\x) removed, nothing that
        // changes Markdown or HTML may be left, and nothing a GFM renderer would make a link.
        const outside = out
          .split("\n")
          .map((l) => splitCodeSpans(l).text)
          .join("\n");
        const PAGE_LINK =
          /\[[a-z0-9-]+\]\(https:\/\/github\.com\/proxyscope\/proxyscope\/blob\/v[0-9.]+\/docs\/findings\/[a-z0-9-]+\.md\)/g;
        const link = autolinkIn(outside.replace(PAGE_LINK, ""));
        if (link !== null) throw new Error(`an autolink: ${link}`);
        const unescaped = out
          .split("\n")
          .map((l) => {
            const { code } = splitCodeSpans(l);
            for (const c of code) if (/[\r\n]/.test(c)) throw new Error(`a line break in code: ${c}`);
            return code.reduce((rest, c) => rest.replace(c, ""), l);
          })
          .join("\n")
          .replace(/`+ ?/g, "")
          .replace(/\\./g, "");
        if (/[<`]/.test(unescaped)) throw new Error(`raw < or backtick: ${unescaped.slice(0, 300)}`);
        // The only links are the findings' pages, built from well-formed ids.
        const PAGE =
          /\[[a-z0-9-]+\]\(https:\/\/github\.com\/proxyscope\/proxyscope\/blob\/v[0-9.]+\/docs\/findings\/[a-z0-9-]+\.md\)/g;
        if (/\]\(/.test(unescaped.replace(PAGE, ""))) throw new Error("a link");
        let columns = -1;
        for (const line of out.split("\n")) {
          if (!line.startsWith("|")) {
            columns = -1;
            continue;
          }
          const pipes = line.replace(/\\./g, "").split("|").length;
          if (columns === -1) columns = pipes;
          else if (pipes !== columns)
            throw new Error(`row with ${pipes - 2} columns, table has ${columns - 2}: ${line}`);
        }
      }),
      opts,
    );
    t.pass();
  },
);

// The template's own tags and attributes; anything else in the page came from data.
const TAGS = new Set(
  "html head meta title style body header h1 span b div main section h2 ol li dl dt dd ul code select option input table thead tr th tbody td i script a button small colgroup col details summary".split(
    " ",
  ),
);
const ATTRS = new Set(
  "lang charset http-equiv content name class style title id value aria-label type placeholder data-node data-phase data-verdict data-search href rel tabindex aria-expanded data-s data-col colspan hidden".split(
    " ",
  ),
);

/** Tags outside raw-text elements, with attributes as an HTML tokenizer reads them. */
function tags(page: string): { name: string; attrs: [string, string][]; end: boolean }[] {
  const out: { name: string; attrs: [string, string][]; end: boolean }[] = [];
  const re = /<(\/?)([a-zA-Z][^\s/>]*)((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+))?)*)\s*\/?>/gy;
  let i = 0;
  while (i < page.length) {
    const lt = page.indexOf("<", i);
    if (lt === -1) break;
    if (page.startsWith("<!doctype", lt)) {
      i = page.indexOf(">", lt) + 1;
      continue;
    }
    re.lastIndex = lt;
    const m = re.exec(page);
    if (!m) throw new Error(`a "<" that is no template tag: ${JSON.stringify(page.slice(lt, lt + 80))}`);
    const attrs = [...m[3]!.matchAll(/([^\s"'>/=]+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s>]+))?/g)].map(
      (a) => [a[1]!.toLowerCase(), (a[2] ?? "").replace(/^["']|["']$/g, "")] as [string, string],
    );
    const name = m[2]!.toLowerCase();
    out.push({ name, attrs, end: m[1] === "/" });
    i = re.lastIndex;
    // Raw text: skip to the element's end tag, as a browser would.
    if (!out.at(-1)!.end && (name === "script" || name === "style")) {
      const close = page.indexOf(`</${name}`, i);
      out.push({ name: `${name}-content`, attrs: [["text", page.slice(i, close)]], end: false });
      i = close;
    }
  }
  return out;
}

t.test("HTML: every tag and attribute is the template's; the data block is inert JSON", async (t) => {
  const fixed = renderHtml(
    rollup({
      source: "agents",
      collectorVersion: "0.1.0",
      generatedAt: new Date("2026-11-29T12:00:00Z"),
      cluster: facts({}),
      observations: [],
      missingOutcome: "no-agent",
    }),
  );
  const scriptsInTemplate = tags(fixed).filter((x) => x.name === "script" && !x.end).length;
  fc.assert(
    fc.property(hostileReport, (r) => {
      const page = renderHtml(r);
      const all = tags(page);
      for (const tag of all) {
        if (tag.name.endsWith("-content")) continue;
        if (!TAGS.has(tag.name)) throw new Error(`tag <${tag.name}> from data`);
        for (const [k, v] of tag.attrs) {
          if (!ATTRS.has(k)) throw new Error(`attribute ${k} on <${tag.name}> from data`);
          if (/[<>"]/.test(v)) throw new Error(`raw ${v} in ${k}`);
          if (k !== "data-search" && k !== "data-node" && k !== "data-s" && /^\s*javascript:/i.test(v))
            throw new Error(`javascript: in ${k}`);
          // A link goes only to a finding's page, and only from <a>.
          if (
            k === "href" &&
            (tag.name !== "a" ||
              !/^https:\/\/github\.com\/proxyscope\/proxyscope\/blob\/v[0-9.]+\/docs\/findings\/[a-z0-9-]+\.md$/.test(
                v,
              ))
          )
            throw new Error(`href ${v} on <${tag.name}>`);
        }
      }
      const scripts = all.filter((x) => x.name === "script-content");
      if (scripts.length !== scriptsInTemplate) throw new Error(`${scripts.length} scripts`);
      const data = scripts[0]!.attrs[0]![1];
      if (/[<>]/.test(data)) throw new Error("< or > in the data block");
      const parsed = JSON.parse(data) as { nodes: { node: string }[] };
      if (JSON.stringify(parsed.nodes.map((n) => n.node)) !== JSON.stringify(r.nodes.map((n) => n.node)))
        throw new Error("node names do not round-trip through the data block");
    }),
    opts,
  );
  t.pass();
});

// --- the server ------------------------------------------------------------------------------------

const report = fc.sample(hostileReport, { numRuns: 1, seed: 42 })[0]!;
let gathers = 0;
const s = buildServer({
  intervalMs: 3_600_000,
  gather: async () => {
    gathers++;
    return { ok: true, report };
  },
  log: () => {},
});
s.start();
s.stop();
await new Promise((r) => setTimeout(r, 50));
await s.app.listen({ host: "127.0.0.1", port: 0 });
t.teardown(() => s.app.close());
const port = (s.app.server.address() as net.AddressInfo).port;

// A canary: if any request made the collector fetch a URL, this server would see it.
let fetched = 0;
const canary = http.createServer((_q, res) => {
  fetched++;
  res.end();
});
await new Promise<void>((r) => canary.listen(0, "127.0.0.1", () => r()));
t.teardown(() => new Promise<void>((r) => canary.close(() => r())));
const canaryUrl = `http://127.0.0.1:${(canary.address() as net.AddressInfo).port}/`;

/** One raw request; the answer's status and body (the server's own HTTP parser, not inject). */
function raw(request: string | Buffer): Promise<{ status: number; head: string; body: string }> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, "127.0.0.1");
    let data = "";
    sock.on("data", (d) => (data += d.toString("latin1")));
    sock.on("error", reject);
    sock.on("close", () => {
      const [head = "", ...body] = data.split("\r\n\r\n");
      resolve({
        status: Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1] ?? 0),
        head,
        body: body.join("\r\n\r\n"),
      });
    });
    sock.end(request);
  });
}

const PATHS = ["/", "/report", "/metrics", "/healthz"];

t.test("only GET and HEAD on the four paths; every other method is refused", async (t) => {
  for (const p of PATHS) {
    t.equal((await s.app.inject({ method: "GET", url: p })).statusCode, 200, `GET ${p}`);
    t.equal((await s.app.inject({ method: "HEAD", url: p })).statusCode, 200, `HEAD ${p}`);
    for (const method of ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"] as const) {
      const r = await s.app.inject({ method, url: p, payload: "x=1" });
      // The agent's server and this one share common/http-server.ts: a known path is 405, with allow.
      t.equal(r.statusCode, 405, `${method} ${p}`);
      t.equal(r.headers.allow, "GET, HEAD", `${method} ${p}: allow`);
      t.same(r.json(), { error: "method not allowed" }, `${method} ${p}: fixed words`);
    }
  }
  const trace = await raw(`TRACE / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
  t.ok(trace.status >= 400, `TRACE: ${trace.status}`);
});

t.test("unknown paths and bad requests reflect nothing from the request", async (t) => {
  for (const p of [
    "/%3Cscript%3Ealert(1)%3C/script%3E",
    "/<img src=x onerror=alert(1)>",
    "/report/../../etc/passwd",
    "/x?<script>=1",
    "/%",
    `/${"a".repeat(5000)}`,
  ]) {
    const r = await raw(`GET ${p} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    t.ok(r.status >= 400 && r.status < 500, `${p.slice(0, 40)}: ${r.status}`);
    t.notMatch(r.body, /script|onerror|passwd|aaaa|%3C/i, `${p.slice(0, 40)}: not reflected`);
  }
  const evilType = await s.app.inject({
    method: "POST",
    url: "/report",
    headers: { "content-type": "text/<script>" },
    payload: "x",
  });
  t.notMatch(evilType.body, /script/, "a content type is not reflected");
});

t.test("header, query and body limits", async (t) => {
  const bigHeader = await raw(
    `GET / HTTP/1.1\r\nHost: x\r\nX-A: ${"a".repeat(20_000)}\r\nConnection: close\r\n\r\n`,
  );
  t.equal(bigHeader.status, 431, "a 20 kB header is refused");
  const bigQuery = await raw(
    `GET /report?q=${"a".repeat(20_000)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
  );
  t.equal(bigQuery.status, 431, "a 20 kB query is refused");
  const body = await s.app.inject({ method: "POST", url: "/report", payload: "a".repeat(100_000) });
  t.ok(body.statusCode >= 400, `a 100 kB body: ${body.statusCode}`);
  const getBody = await raw(
    `GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\nConnection: close\r\n\r\n${"a".repeat(100_000)}`,
  );
  t.equal(getBody.status, 400, "a GET with a body is refused, as the agent refuses it");
  t.equal((await s.app.inject({ url: "/healthz" })).statusCode, 200, "still serving");
});

t.test("no request makes it fetch a URL or gather", async (t) => {
  const before = gathers;
  for (const url of [
    `/report?url=${encodeURIComponent(canaryUrl)}`,
    `/?source=${encodeURIComponent(canaryUrl)}&prometheus-url=${encodeURIComponent(canaryUrl)}`,
    `/metrics?target=${encodeURIComponent(canaryUrl)}`,
    `/healthz?refresh=1`,
  ])
    await s.app.inject({
      url,
      headers: {
        host: canaryUrl.slice(7, -1),
        "x-forwarded-host": canaryUrl.slice(7, -1),
        referer: canaryUrl,
        "x-original-url": canaryUrl,
      },
    });
  await s.app.inject({ method: "POST", url: "/report", payload: { url: canaryUrl } });
  await new Promise((r) => setTimeout(r, 100));
  t.equal(fetched, 0, "nothing fetched");
  t.equal(gathers, before, "no gather on request");
});

t.test("what it serves: typed, not sniffed, not cached; HTML under a strict CSP", async (t) => {
  const page = await s.app.inject({ url: "/" });
  t.match(page.headers["content-type"], /^text\/html; charset=utf-8/);
  t.equal(page.headers["x-content-type-options"], "nosniff");
  t.equal(page.headers["cache-control"], "no-store");
  t.match(page.body, /Content-Security-Policy" content="default-src &#39;none&#39;; /);
  t.match((await s.app.inject({ url: "/report" })).headers["content-type"], /^application\/json/);
});
