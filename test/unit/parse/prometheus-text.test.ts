import t from "tap";
import { readFileSync } from "node:fs";
import { parsePrometheusText, sumFamilies } from "../../../agent/parse/prometheus-text.js";

const fixture = (p: string) =>
  readFileSync(new URL(`../../fixtures/kube-proxy/${p}`, import.meta.url), "utf8");

t.test("HELP, TYPE and a counter family summed over its series", async (t) => {
  const r = parsePrometheusText(
    [
      "# HELP reqs_total Requests\\nby code, with a \\\\ backslash",
      "# TYPE reqs_total counter",
      'reqs_total{code="200"} 3',
      'reqs_total{code="503"} 4.5',
      "",
    ].join("\n"),
  );
  t.ok(r.ok);
  if (!r.ok) return;
  const fam = r.value.get("reqs_total")!;
  t.equal(fam.type, "counter");
  t.equal(fam.help, "Requests\nby code, with a \\ backslash");
  t.equal(fam.samples.length, 2);
  t.same(sumFamilies(r.value).get("reqs_total"), {
    type: "counter",
    value: 7.5,
    series: 2,
    min: 3,
    max: 4.5,
  });
});

t.test("label values with escapes, spacing, trailing comma and an empty label set", async (t) => {
  const r = parsePrometheusText(
    'm{path="C:\\\\dir",quote="say \\"hi\\"",nl="a\\nb",} 1\n' + "n{} 2\n" + 'o{ a = "x" , b="y" } 3\n',
  );
  t.ok(r.ok);
  if (!r.ok) return;
  t.same(r.value.get("m")!.samples[0]!.labels, { path: "C:\\dir", quote: 'say "hi"', nl: "a\nb" });
  t.same(r.value.get("n")!.samples[0]!.labels, {});
  t.same(r.value.get("o")!.samples[0]!.labels, { a: "x", b: "y" });
  t.equal(r.value.get("m")!.type, "untyped");
});

t.test("NaN, +Inf, -Inf, exponents and millisecond timestamps", async (t) => {
  const r = parsePrometheusText("a NaN\nb +Inf\nc -Inf\nd 1.7325e+09 1700000000123\ne -2 -5\nf .5\n");
  t.ok(r.ok);
  if (!r.ok) return;
  t.ok(Number.isNaN(r.value.get("a")!.samples[0]!.value));
  t.equal(r.value.get("b")!.samples[0]!.value, Infinity);
  t.equal(r.value.get("c")!.samples[0]!.value, -Infinity);
  t.equal(r.value.get("d")!.samples[0]!.value, 1.7325e9);
  t.equal(r.value.get("d")!.samples[0]!.timestampMs, 1700000000123);
  t.equal(r.value.get("e")!.samples[0]!.timestampMs, -5);
  t.equal(r.value.get("f")!.samples[0]!.value, 0.5);
  t.equal(r.value.get("a")!.samples[0]!.timestampMs, null);
});

t.test("histogram and summary samples belong to their family; sums are per _count/_sum", async (t) => {
  const text = [
    "# TYPE lat histogram",
    'lat_bucket{ip_family="IPv4",le="0.1"} 1',
    'lat_bucket{ip_family="IPv4",le="+Inf"} 3',
    'lat_sum{ip_family="IPv4"} 0.7',
    'lat_count{ip_family="IPv4"} 3',
    'lat_bucket{ip_family="IPv6",le="0.1"} 0',
    'lat_bucket{ip_family="IPv6",le="+Inf"} 2',
    'lat_sum{ip_family="IPv6"} 0.25',
    'lat_count{ip_family="IPv6"} 2',
    "# TYPE rpc summary",
    'rpc{quantile="0.5"} NaN',
    "rpc_sum 0",
    "rpc_count 0",
    "# a free comment is fine",
    "plain_count 9",
  ].join("\n");
  const r = parsePrometheusText(text);
  t.ok(r.ok);
  if (!r.ok) return;
  t.same([...r.value.keys()], ["lat", "rpc", "plain_count"]);
  t.equal(r.value.get("lat")!.samples.length, 8);
  const sums = sumFamilies(r.value);
  t.same(sums.get("lat_count"), { type: "histogram", value: 5, series: 2, min: 2, max: 3 });
  t.same(sums.get("lat_sum"), { type: "histogram", value: 0.95, series: 2, min: 0.25, max: 0.7 });
  t.notOk(sums.has("lat"), "buckets are not summed into a number");
  t.same(sums.get("rpc_count"), { type: "summary", value: 0, series: 1, min: 0, max: 0 });
  t.same(sums.get("plain_count"), { type: "untyped", value: 9, series: 1, min: 9, max: 9 });
});

t.test("lines that are not exposition are garbage, with the line number", async (t) => {
  const bad: [string, RegExp][] = [
    ["<html><body>502</body></html>", /line 1: no metric name/],
    ["ok 1\nfoo bar baz", /line 2/],
    ['m{a="x} 1', /unterminated/],
    ['m{a="\\t"} 1', /invalid escape/],
    ["m{a=x} 1", /not quoted/],
    ['m{a="1",a="2"} 1', /duplicate label/],
    ["m one", /not a number/],
    ["m 1 1.5", /timestamp/],
    ["m 1 2 3", /value and an optional timestamp/],
    ["m", /value/],
    ["# TYPE m counter\n# TYPE m gauge", /second TYPE/],
    ["m 1\n# TYPE m counter", /TYPE line after samples/],
    ["# TYPE m sometimes", /unknown metric type/],
    ["# HELP m a\n# HELP m b", /second HELP/],
    ["m{} 1junk", /not a number/],
  ];
  for (const [text, why] of bad) {
    const r = parsePrometheusText(text);
    t.equal(r.ok, false, JSON.stringify(text));
    if (!r.ok) t.match(r.error, why, JSON.stringify(text));
  }
});

t.test("CRLF line ends and a missing final newline are accepted", async (t) => {
  const r = parsePrometheusText("# TYPE x gauge\r\nx 1\r\ny 2");
  t.ok(r.ok);
  if (r.ok) t.same([...r.value.keys()], ["x", "y"]);
});

t.test("upstream exposition text (pkg/proxy/metrics/metrics_linux_test.go), verbatim", async (t) => {
  const r = parsePrometheusText(fixture("upstream/metrics_linux_test-rejected-packets.txt"));
  t.ok(r.ok);
  if (!r.ok) return;
  const fam = r.value.get("kubeproxy_nftables_localhost_nodeport_rejected_packets_total")!;
  t.equal(fam.type, "counter");
  t.match(fam.help, /^\[ALPHA\] Number of packets rejected on localhost NodePorts/);
  t.same(
    fam.samples.map((s) => [s.labels.protocol, s.value]),
    [
      ["SCTP", 3],
      ["UDP", 7],
    ],
  );
});

// The fuzz test found it (seed -1187750645): a TYPE line whose type was broken by thousands of spaces
// came back whole inside the error, 4,940 characters of it into /report.
t.test("an error quotes at most an excerpt of what it rejects, however long the line", async (t) => {
  const pad = " ".repeat(5000);
  const cases: [string, RegExp][] = [
    [`# TYPE m c${pad}ounter`, /unknown metric type/],
    [`m{${"a".repeat(5000)}="1",${"a".repeat(5000)}="2"} 1`, /duplicate label/],
  ];
  for (const [text, why] of cases) {
    const r = parsePrometheusText(text);
    t.equal(r.ok, false);
    if (r.ok) continue;
    t.match(r.error, why);
    t.ok(r.error.length < 400, `${r.error.length} characters`);
  }
});
