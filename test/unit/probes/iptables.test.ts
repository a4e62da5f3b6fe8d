import t from "tap";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ToolRunner } from "../../../agent/io/run.js";
import { iptablesProbe } from "../../../agent/probes/iptables.js";
import type { ProbeContext } from "../../../agent/probes/types.js";

// Fake tool dirs: small executable scripts that print recorded output and exit with a chosen code,
// so exit codes and missing tools are exercised through the real ToolRunner.
const rec = new URL("../../fixtures/netfilter/recorded/", import.meta.url);
// Every tool dir and /proc this file makes lives here, removed when the file ends.
const scratch = mkdtempSync(join(tmpdir(), "proxyscope-iptables-"));
t.teardown(() => rmSync(scratch, { recursive: true, force: true }));

function toolDir(
  tools: Record<string, { file?: string; text?: string; code?: number; stderr?: string }>,
): string {
  const dir = mkdtempSync(join(scratch, "tools-"));
  for (const [name, spec] of Object.entries(tools)) {
    const data = spec.file ? readFileSync(new URL(spec.file, rec), "utf8") : (spec.text ?? "");
    const out = join(dir, `${name}.out`);
    writeFileSync(out, data);
    // Each run leaves <name>.ran, so a test can tell a tool that was not started from one that printed nothing.
    const script = `#!/bin/sh\n: > '${join(dir, `${name}.ran`)}'\n/bin/cat '${out}'\n${spec.stderr ? `echo '${spec.stderr}' >&2\n` : ""}exit ${spec.code ?? 0}\n`;
    writeFileSync(join(dir, name), script);
    chmodSync(join(dir, name), 0o755);
  }
  return dir;
}

/**
 * A /proc whose net/ip_tables_names and net/ip6_tables_names list these legacy tables (a name per
 * line, as the kernel prints them); null leaves that file out (ip(6)_tables not loaded). The host's own
 * /proc is not used: what it lists depends on the machine.
 */
function procWith(v4: string[] | null = ["filter", "nat"], v6: string[] | null = ["filter"]): string {
  const root = mkdtempSync(join(scratch, "proc-"));
  mkdirSync(join(root, "net"));
  if (v4 !== null) writeFileSync(join(root, "net/ip_tables_names"), v4.map((n) => `${n}\n`).join(""));
  if (v6 !== null) writeFileSync(join(root, "net/ip6_tables_names"), v6.map((n) => `${n}\n`).join(""));
  return root;
}

function ctx(dir: string, prior: ProbeContext["prior"] = {}): ProbeContext {
  return {
    hostRoot: "/",
    procRoot: procWith(),
    sysRoot: "/sys",
    tools: new ToolRunner([dir]),
    callTimeoutMs: 10_000,
    prior,
  };
}

t.test("iptables: a missing legacy backend is recorded per backend, the rest still read", async (t) => {
  const dir = toolDir({
    "iptables-nft-save": { file: "iptables-mode/iptables-nft-save.txt" },
    "ip6tables-nft-save": { file: "iptables-mode/ip6tables-nft-save.txt" },
    "ip6tables-legacy-save": { text: "", code: 1, stderr: "ip6tables-legacy-save: cannot initialize" },
  });
  const r = await iptablesProbe.run(ctx(dir));
  if (!r.ok) return t.fail(JSON.stringify(r.error));
  const [legacy4, legacy6, nft4, nft6] = r.facts.backends;
  // Unread: why, and no lists or counts a reader could take for "none".
  t.match(legacy4, {
    backend: "legacy",
    family: "ipv4",
    read: false,
    why: {
      kind: "missing-tool",
      message: /iptables-legacy-save not found/,
      command: "iptables-legacy-save -c",
    },
  });
  t.notOk(legacy4 !== undefined && "totalRules" in legacy4, "an unread backend carries no count");
  t.equal(legacy6?.read, false);
  t.match(legacy6?.read === false && legacy6.why, {
    kind: "exit-status",
    message: /ip6tables-legacy-save exited 1: ip6tables-legacy-save: cannot initialize/,
  });
  t.equal(nft4?.read && nft4.totalRules, 79);
  t.equal(nft6?.read, true);
  t.ok(iptablesProbe.schema.safeParse(r.facts).success);
});

t.test("iptables: a legacy tool failing where the kernel has no legacy tables reads as empty", async (t) => {
  const dir = toolDir({
    "iptables-nft-save": { file: "iptables-mode/iptables-nft-save.txt" },
    "ip6tables-nft-save": { file: "iptables-mode/ip6tables-nft-save.txt" },
    "iptables-legacy-save": { text: "", code: 1, stderr: "iptables-legacy-save: cannot open" },
    "ip6tables-legacy-save": { text: "", code: 1, stderr: "ip6tables-legacy-save: cannot open" },
  });
  const noLegacy = mkdtempSync(join(scratch, "proc-")); // no net/ip{,6}_tables_names
  const r = await iptablesProbe.run({ ...ctx(dir), procRoot: noLegacy });
  if (!r.ok) return t.fail(JSON.stringify(r.error));
  t.same(
    r.facts.backends.map((b) => [b.backend, b.family, b.read, b.read && b.totalRules]),
    [
      ["legacy", "ipv4", true, 0],
      ["legacy", "ipv6", true, 0],
      ["nft", "ipv4", true, 79],
      ["nft", "ipv6", true, r.facts.backends[3]?.read && r.facts.backends[3].totalRules],
    ],
  );
});

t.test("iptables: garbage from one backend leaves it unread, the others read", async (t) => {
  const dir = toolDir({
    "iptables-nft-save": { file: "iptables-mode/iptables-nft-save.txt" },
    "ip6tables-nft-save": { file: "iptables-mode/ip6tables-nft-save.txt" },
    "iptables-legacy-save": { text: '*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -m comment --comment "a\n' },
    "ip6tables-legacy-save": { file: "iptables-mode/ip6tables-legacy-save.txt" },
  });
  const r = await iptablesProbe.run(ctx(dir));
  if (!r.ok) return t.fail(JSON.stringify(r.error));
  const legacy4 = r.facts.backends[0];
  t.match(legacy4, { read: false, why: { kind: "garbage", message: /ends inside a quoted string/ } });
  t.equal(r.facts.backends.filter((b) => b.read).length, 3);
});

t.test(
  "iptables: garbage from one tool is that backend's error; all four failing fails the probe",
  async (t) => {
    const dir = toolDir({ "iptables-nft-save": { text: "*filter\n:INPUT ACCEPT [0:0]\n" } });
    const r = await iptablesProbe.run(ctx(dir));
    t.equal(r.ok, false);
    if (r.ok) return;
    t.equal(r.error.kind, "exec-failed", "mixed kinds: missing-tool x3 and garbage");
    t.match(
      r.error.message,
      /garbage: iptables-nft-save -c: iptables-save output ends inside table \*filter/,
    );
    const none = await iptablesProbe.run(ctx(toolDir({})));
    t.same(none.ok === false && none.error.kind, "missing-tool");
  },
);

t.test(
  "iptables: one backend refused permission fails the probe, naming it; the others read fine",
  async (t) => {
    const dir = toolDir({
      "iptables-legacy-save": {
        text: "",
        code: 1,
        stderr: "iptables-legacy-save v1.8.9 (legacy): Permission denied (you must be root)",
      },
      "ip6tables-legacy-save": { text: "" },
      "iptables-nft-save": { file: "iptables-mode/iptables-nft-save.txt" },
      "ip6tables-nft-save": { file: "iptables-mode/ip6tables-nft-save.txt" },
    });
    const r = await iptablesProbe.run(ctx(dir));
    t.equal(r.ok, false, "a partial view of iptables is not served as the node's state");
    if (r.ok) return;
    t.equal(r.error.kind, "not-permitted");
    t.match(r.error.message, /^legacy ipv4 could not be read/);
  },
);

t.test(
  "iptables: no legacy table in the kernel's list is an empty legacy backend, without running the tool",
  async (t) => {
    const legacy = { text: "*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n" };
    const dir = toolDir({
      "iptables-legacy-save": legacy,
      "ip6tables-legacy-save": legacy,
      "iptables-nft-save": { file: "iptables-mode/iptables-nft-save.txt" },
      "ip6tables-nft-save": { file: "iptables-mode/ip6tables-nft-save.txt" },
    });
    // ip_tables loaded, no table made in this namespace yet (empty list); ip6_tables not loaded.
    const r = await iptablesProbe.run({ ...ctx(dir), procRoot: procWith([], null) });
    if (!r.ok) return t.fail(JSON.stringify(r.error));
    t.same(
      r.facts.backends
        .slice(0, 2)
        .map((b) => [b.family, b.read, b.read && b.totalRules, b.read && b.policies]),
      [
        ["ipv4", true, 0, {}],
        ["ipv6", true, 0, {}],
      ],
    );
    t.notOk(existsSync(join(dir, "iptables-legacy-save.ran")), "iptables-legacy-save was not run");
    t.notOk(existsSync(join(dir, "ip6tables-legacy-save.ran")), "ip6tables-legacy-save was not run");
    t.ok(existsSync(join(dir, "iptables-nft-save.ran")), "the nf_tables backends are read as before");

    // A table in the list: the tool runs and what it prints is the backend.
    const listed = await iptablesProbe.run({ ...ctx(dir), procRoot: procWith(["filter"], []) });
    if (!listed.ok) return t.fail(JSON.stringify(listed.error));
    t.match(listed.facts.backends[0], { family: "ipv4", read: true, policies: { "filter/INPUT": "ACCEPT" } });
    t.ok(existsSync(join(dir, "iptables-legacy-save.ran")), "listed: iptables-legacy-save ran");
    t.notOk(existsSync(join(dir, "ip6tables-legacy-save.ran")), "ip6: still nothing listed");
  },
);

t.test("iptables: a table list that cannot be read is not taken for none: the tool is asked", async (t) => {
  const dir = toolDir({
    "iptables-legacy-save": { file: "iptables-mode/iptables-nft-save.txt" },
    "ip6tables-legacy-save": { text: "" },
    "iptables-nft-save": { file: "iptables-mode/iptables-nft-save.txt" },
    "ip6tables-nft-save": { file: "iptables-mode/ip6tables-nft-save.txt" },
  });
  const proc = procWith(null, null);
  mkdirSync(join(proc, "net/ip_tables_names")); // there, but not a file that can be read
  const r = await iptablesProbe.run({ ...ctx(dir), procRoot: proc });
  if (!r.ok) return t.fail(JSON.stringify(r.error));
  t.ok(existsSync(join(dir, "iptables-legacy-save.ran")), "unreadable list: the tool ran");
  t.equal(r.facts.backends[0]?.read && r.facts.backends[0].totalRules, 79, "and its answer is the backend");
  t.notOk(existsSync(join(dir, "ip6tables-legacy-save.ran")), "ip6: no list at all is no table");
});
