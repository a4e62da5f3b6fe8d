// `report --from-files` and `report --demo`: saved node reports instead of a gather. Each file gets the
// bounds an agent's answer gets; a bad one is its own row, named by its path, and never ends the report.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t from "tap";
import { EXIT } from "../../common/exit-codes.js";
import { MAX_ANSWER_BYTES } from "../../collector/gather/answer-bounds.js";
import { DEMO_SAMPLE_FILES } from "../../collector/demo/samples.js";
import { FleetReport } from "../../collector/report/schema.js";
import { run as runCmd } from "./collector-fleet.js";
import { collector, fleetFlags, node, startApiServer } from "./collector-fleet.js";
import { REPO_ROOT } from "../helpers/uml.js";

const dir = mkdtempSync(join(tmpdir(), "proxyscope-saved-"));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const sample = (f: string) => join(REPO_ROOT, "collector/demo", f);
// Two real node reports (the demo's, made by the agent's rules), and one of them again under another name.
copyFileSync(sample("ip-10-20-8-40.json"), join(dir, "a-good.json"));
copyFileSync(sample("ip-10-20-5-30.json"), join(dir, "b-good.json"));
copyFileSync(sample("ip-10-20-8-40.json"), join(dir, "c-same-node.json"));
writeFileSync(join(dir, "d-garbage.json"), "<html>502 Bad Gateway</html>");
writeFileSync(join(dir, "e-schema.json"), JSON.stringify({ schemaVersion: "99", node: "x" }));
writeFileSync(join(dir, "f-deep.json"), `${"[".repeat(100_000)}${"]".repeat(100_000)}`);
writeFileSync(join(dir, "g-large.json"), "");
truncateSync(join(dir, "g-large.json"), MAX_ANSWER_BYTES + 1);
mkdirSync(join(dir, "h-dir.json"));
writeFileSync(join(dir, "not-a-report.txt"), "skipped: not *.json");
await runCmd("mkfifo", [join(dir, "i-fifo.json")]);

t.test("a directory: every file a row, the bad ones named by path, exit 0", async (t) => {
  const r = await collector(["report", "--from-files", dir, "-o", "json"]);
  t.equal(r.code, EXIT.ok, r.stderr);
  t.notMatch(r.stderr, /internal error/);
  const rep = FleetReport.parse(JSON.parse(r.stdout));
  t.equal(rep.scope?.kind, "saved-files");
  t.match(rep.scope?.heading, /^from saved node reports \(/);
  t.equal(rep.nodes.length, 9, "one row per *.json entry: none dropped");
  const by = (suffix: string) => rep.nodes.find((n) => n.node.endsWith(suffix));
  t.equal(by("ip-10-20-8-40.eu-west-1.compute.internal")?.verdict, "ready");
  t.equal(by("ip-10-20-5-30.eu-west-1.compute.internal")?.verdict, "blocked");
  for (const [f, outcome, reason] of [
    ["c-same-node.json", "wrong-node", /another file \(.*a-good\.json\) is also node/],
    ["d-garbage.json", "garbage", /not JSON|Unexpected token/],
    ["e-schema.json", "schema-mismatch", /schemaVersion "99"/],
    ["f-deep.json", "garbage", /answer too large/],
    ["g-large.json", "garbage", /answer too large: larger than 4194304 bytes/],
    ["h-dir.json", "unreachable", /not a regular file/],
    ["i-fifo.json", "unreachable", /not a regular file/],
  ] as const) {
    const n = by(f);
    t.equal(n?.outcome, outcome, `${f}: ${n?.reason}`);
    t.match(n?.reason, reason, f);
    t.equal(n?.verdict, null, `${f}: no verdict claimed`);
  }
  t.same(rep.scope?.notRead.map((l) => l.split(":")[0]!.replace(`${dir}/`, "")).sort(), [
    "c-same-node.json",
    "d-garbage.json",
    "e-schema.json",
    "f-deep.json",
    "g-large.json",
    "h-dir.json",
    "i-fifo.json",
  ]);
  const un = await collector(["report", "--from-files", dir, "--fail-on", "unanswered"]);
  t.equal(un.code, EXIT.findings, "the bad files reach --fail-on unanswered");
  t.match(un.stdout, /^from saved node reports/, "the table says where it came from first");
});

t.test("files as operands after one --from-files; the API joins with --kubeconfig", async (t) => {
  const api = await startApiServer({
    nodes: [
      node({ name: "ip-10-20-8-40.eu-west-1.compute.internal", kernel: "6.1.119", osImage: "Bottlerocket" }),
      node({ name: "node-without-file", kernel: "6.8.0-1015-aws", osImage: "Ubuntu 24.04.1 LTS" }),
    ],
    pods: [],
  });
  t.teardown(() => api.stop());
  const r = await collector([
    "report",
    ...fleetFlags(api.kubeconfig, 9977),
    "-o",
    "json",
    "--from-files",
    join(dir, "a-good.json"),
    join(dir, "d-garbage.json"),
  ]);
  t.equal(r.code, EXIT.ok, r.stderr);
  const rep = FleetReport.parse(JSON.parse(r.stdout));
  const missing = rep.nodes.find((n) => n.node === "node-without-file");
  t.equal(missing?.outcome, "no-data");
  t.match(missing?.reason, /no saved report for this node among --from-files/);
  t.equal(rep.nodes.find((n) => n.node.startsWith("ip-10-20-8-40"))?.listedByApi, true);
  t.equal(rep.nodes.length, 3, "the API's two nodes and the bad file");
});

t.test("usage errors: a missing path, an empty directory, another source", async (t) => {
  const empty = join(dir, "h-dir.json");
  for (const [args, msg] of [
    [["--from-files", join(dir, "nope.json")], /--from-files .*nope\.json: ENOENT/],
    [["--from-files", empty], /no \.json file in this directory/],
    [["--from-files", dir, "--source", "prometheus"], /--from-files cannot be used with --source/],
    [["--demo", "--from-files", dir], /cannot be used with --(demo|from-files)/],
    [["--demo", "--agents", "http://127.0.0.1:1"], /--demo cannot be used with --agents/],
  ] as const) {
    const r = await collector(["report", ...args]);
    t.equal(r.code, EXIT.usage, `${args.join(" ")}: ${r.stderr}`);
    t.match(r.stderr, msg);
    t.equal(r.stdout, "");
  }
});

t.test("--demo: the shipped sample fleet, said to be a demo in every format", async (t) => {
  const json = await collector(["report", "--demo", "-o", "json"]);
  t.equal(json.code, EXIT.ok, json.stderr);
  const rep = FleetReport.parse(JSON.parse(json.stdout));
  t.equal(rep.scope?.kind, "demo");
  t.equal(rep.nodes.length, DEMO_SAMPLE_FILES.length);
  t.ok(rep.nodes.every((n) => n.outcome === "ok"));
  t.same(
    [...new Set(rep.nodes.map((n) => n.verdict))].sort(),
    ["blocked", "clean", "ready", "unhealthy"],
    "a mixed fleet",
  );
  for (const [fmt, heading] of [
    ["table", /^DEMO: a sample fleet/],
    ["markdown", /^# proxyscope fleet report\n\n> \*\*DEMO: a sample fleet/],
    ["html", /<h1>[^<]* — DEMO sample fleet<\/h1>/],
    ["csv", /,report_scope\r\n(.*,DEMO sample fleet\r\n)+$/],
  ] as const) {
    const r = await collector(["report", "--demo", "-o", fmt]);
    t.equal(r.code, EXIT.ok, `${fmt}: ${r.stderr}`);
    t.match(r.stdout, heading, fmt);
  }
  const gate = await collector(["report", "--demo", "--fail-on", "error"]);
  t.equal(gate.code, EXIT.findings, "the demo's blocked nodes reach --fail-on error");
});

t.test("-o junit: a testcase per node, failing where --fail-on is reached, with the exit code", async (t) => {
  const r = await collector(["report", "--demo", "-o", "junit", "--fail-on", "error"]);
  t.equal(r.code, EXIT.findings, r.stderr);
  t.match(r.stdout, /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<!-- DEMO: /);
  t.match(
    r.stdout,
    /<testsuites name="proxyscope fleet report \(DEMO sample fleet\)" tests="\d+" failures="[1-9]/,
  );
  t.equal((r.stdout.match(/classname="proxyscope.node"/g) ?? []).length, DEMO_SAMPLE_FILES.length);
  t.match(
    r.stdout,
    /name="ip-10-20-5-30.eu-west-1.compute.internal" time="0">\n\s+<failure message="reached --fail-on error: [^"]*foreign-ipvs-virtual-servers/,
  );
  const changes = await collector(["report", "--demo", "--changes", "-o", "junit"]);
  t.equal(changes.code, EXIT.usage);
  t.match(changes.stderr, /-?-o(utput)? junit is for the fleet report, not --changes/);
});

t.test("--accept-file: accepted findings shown, not counted; bad files exit 2 by name", async (t) => {
  const ok = join(dir, "accepted.yaml");
  writeFileSync(
    ok,
    [
      "accept:",
      "  - finding: foreign-ipvs-virtual-servers",
      "    node: ip-10-20-5-30.eu-west-1.compute.internal",
      "    reason: keepalived moves off IPVS in the next change window",
      "    expires: 2099-12-31",
      "  - finding: kernel-too-old-for-nftables",
      "    reason: AL2 pool replaced in January",
      "  - finding: kube-ipvs0-black-hole",
      "    reason: node cordoned and drained",
      "  - finding: ipvs-mode-deprecated",
      "    reason: expired long ago",
      "    expires: 2020-01-01",
      "",
    ].join("\n"),
  );
  const r = await collector(["report", "--demo", "--accept-file", ok, "--fail-on", "error", "-o", "json"]);
  t.equal(r.code, EXIT.ok, `everything at error or above is accepted: ${r.stderr}`);
  t.match(r.stderr, /--accept-file: \[3\] ipvs-mode-deprecated: expired 2020-01-01/);
  const rep = FleetReport.parse(JSON.parse(r.stdout));
  const foreign = rep.nodes.flatMap((n) => n.findings).find((f) => f.id === "foreign-ipvs-virtual-servers");
  t.equal(foreign?.accepted?.reason, "keepalived moves off IPVS in the next change window", "shown, marked");
  t.equal(rep.acceptances?.accepted, 3);
  const warn = await collector(["report", "--demo", "--accept-file", ok, "--fail-on", "warning"]);
  t.equal(warn.code, EXIT.findings, "the expired entry accepts nothing");
  t.match(warn.stdout, /foreign-ipvs-virtual-servers \(accepted\)/);
  t.match(warn.stdout, /expired, not applied: \[3\] ipvs-mode-deprecated/);

  const bad = join(dir, "bad.yaml");
  writeFileSync(bad, "accept:\n  - finding: kube-ipvs0-black-hole\n    node: n\n");
  for (const [file, msg] of [
    [bad, /--accept-file .*bad\.yaml: accept\[0\]\.reason: /],
    [join(dir, "missing.yaml"), /cannot read --accept-file .*missing\.yaml: ENOENT/],
    [join(dir, "i-fifo.json"), /cannot read --accept-file .*: not a regular file/],
  ] as const) {
    const e = await collector(["report", "--demo", "--accept-file", file]);
    t.equal(e.code, EXIT.usage, e.stderr);
    t.match(e.stderr, msg);
    t.equal(e.stdout, "", "no report from a bad file");
  }
});
