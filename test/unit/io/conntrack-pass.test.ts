import t from "tap";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConntrackPass } from "../../../agent/io/conntrack-flows.js";
import type { ConntrackFlow } from "../../../agent/parse/proc-net.js";
import { PROBES } from "../../../agent/probes/registry.js";

// nf_conntrack can hold 500,000 entries: a scan reads it once for every probe of a wave that counts in
// it, and each reader gets the counts of its own keys.

const scratch = mkdtempSync(join(tmpdir(), "proxyscope-conntrack-pass-"));
t.teardown(() => rmSync(scratch, { recursive: true, force: true }));

const flow = (dst: string, dport: number) =>
  `ipv4     2 tcp      6 86399 ESTABLISHED src=10.244.1.7 dst=${dst} sport=40001 dport=${dport} src=10.244.1.9 dst=10.244.1.7 sport=8443 dport=40001 [ASSURED] mark=0 zone=0 use=2`;

function procRoot(lines: string[] | null): string {
  const root = mkdtempSync(join(scratch, "proc-"));
  mkdirSync(join(root, "net"));
  if (lines !== null) writeFileSync(join(root, "net/nf_conntrack"), `${lines.join("\n")}\n`);
  return root;
}

const TABLE = [
  flow("10.96.0.1", 443),
  flow("10.96.0.1", 443),
  flow("10.96.0.2", 53),
  flow("192.0.2.1", 30080),
];

t.test("two readers of a wave: one pass over the table, each its own counts", async (t) => {
  const root = procRoot(TABLE);
  const seen: string[] = [];
  const byDst = (f: ConntrackFlow) => (seen.push("a"), f.dst);
  const byPort = (f: ConntrackFlow) => (seen.push("b"), f.dport === 30080 ? "nodeport" : null);
  const pass = new ConntrackPass(root, 1 << 20, ["listeners", "service-conntrack"]);
  const [a, b] = await Promise.all([pass.count("listeners", byDst), pass.count("service-conntrack", byPort)]);
  t.same(a.ok && [...a.value], [
    ["10.96.0.1", 2],
    ["10.96.0.2", 1],
    ["192.0.2.1", 1],
  ]);
  t.same(b.ok && [...b.value], [["nodeport", 1]]);
  // One pass hands each entry to both readers in turn; two reads would give a's four, then b's four.
  t.same(seen, ["a", "b", "a", "b", "a", "b", "a", "b"]);
});

t.test("the pass waits for every expected reader to ask or finish", async (t) => {
  const root = procRoot([flow("10.96.0.1", 443)]);
  const pass = new ConntrackPass(root, 1 << 20, ["listeners", "service-conntrack"]);
  const a = pass.count("listeners", (f) => f.dst);
  // Written after the first reader asked: a read started then would not see it.
  writeFileSync(join(root, "net/nf_conntrack"), `${TABLE.join("\n")}\n`);
  pass.finished("service-conntrack"); // it had nothing to count
  const r = await a;
  t.same(r.ok && r.value.get("10.96.0.1"), 2);
});

t.test("a failed read, or a key that throws, fails every reader with the same named error", async (t) => {
  const missing = new ConntrackPass(procRoot(null), 1 << 20, ["listeners", "service-conntrack"]);
  const both = await Promise.all([
    missing.count("listeners", (f) => f.dst),
    missing.count("service-conntrack", (f) => f.dst),
  ]);
  for (const r of both) t.match(r, { ok: false, error: { message: /nf_conntrack/ } });
  const throwing = new ConntrackPass(procRoot(TABLE), 1 << 20, ["listeners", "service-conntrack"]);
  const thrown = await Promise.all([
    throwing.count("listeners", () => {
      throw new Error("a bug in a key");
    }),
    throwing.count("service-conntrack", (f) => f.dst),
  ]);
  // The read's own guard turns it into a named failure, as it did for one reader's read.
  for (const r of thrown) t.match(r, { ok: false, error: { message: /a bug in a key/ } });
});

t.test("a reader the pass did not expect reads on its own", async (t) => {
  const pass = new ConntrackPass(procRoot(TABLE), 1 << 20, ["service-conntrack"]);
  const r = await pass.count("listeners", (f) => f.dst);
  t.same(r.ok && r.value.size, 3);
});

t.test("the scan's two conntrack readers run in one wave", async (t) => {
  const readers = PROBES.filter((p) => p.readsConntrack === true);
  t.same(readers.map((p) => p.name).sort(), ["listeners", "service-conntrack"]);
  const [a, b] = readers;
  t.same([...(a?.needs ?? [])].sort(), [...(b?.needs ?? [])].sort(), "the same needs: the same wave");
});
