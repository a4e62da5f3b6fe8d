// No tool outlives its call: every tool the agent runs, wrapped the ways real wrappers hang (a shell
// that starts a program that never answers, one that forks into the background holding stdout, ones
// that ignore SIGTERM), through both ToolRunner methods. The processes are counted from /proc by a
// marker unique to each tool directory, before and after; none may be left. Hangs are real hangs
// (sleep 1000000), so a timeout here is never a slow answer, and nothing asserts how fast anything is.
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t from "tap";
import { ToolRunner, type ExecResult, type StreamResult } from "../../../agent/io/run.js";
import { TOOLS, type ToolName } from "../../../agent/io/tools.js";
import { staleBuild } from "../../helpers/built.js";
import { HANG_KINDS, hangingToolDir, type HangKind } from "../../helpers/hanging-tools.js";
import { processesWith, untilNoneWith } from "../../helpers/procs.js";
import { REPO_ROOT } from "../../helpers/uml.js";

const ALL = Object.keys(TOOLS) as ToolName[];
// Long enough that a wrapper that exits on its own is never mistaken for a timeout on a loaded
// machine; the calls below that must time out hang forever, so theirs can be short.
const UNHURRIED_MS = 120_000;
const HANG_MS = 500;

const exitsOnItsOwn = (k: HangKind) => k === "forks-background" || k === "ignores-term-background";

for (const kind of Object.keys(HANG_KINDS) as HangKind[]) {
  t.test(`${kind}: no process is left, for every tool, by run and by streamLines`, async (t) => {
    const tools = hangingToolDir(kind);
    t.teardown(tools.remove);
    t.same(processesWith(tools.marker), [], "none before");
    const runner = new ToolRunner([tools.dir]);
    const opts = { timeoutMs: exitsOnItsOwn(kind) ? UNHURRIED_MS : HANG_MS, maxBytes: 1024 * 1024 };
    const results = await Promise.all(
      ALL.flatMap((tool) => [
        runner.run(tool, ["--probe"], opts).then((r) => ({ tool, how: "run", r, lines: [] as string[] })),
        (async () => {
          const lines: string[] = [];
          const r = await runner.streamLines(tool, ["--probe"], opts, (l) => lines.push(l));
          return { tool, how: "streamLines", r, lines };
        })(),
      ]),
    );
    for (const { tool, how, r, lines } of results) {
      if (exitsOnItsOwn(kind)) {
        // The wrapper answered and exited 0: that is the answer, whatever its children still hold.
        t.ok(r.ok, `${tool} (${how}): the wrapper's own exit ends the call: ${JSON.stringify(r)}`);
        if (how === "run")
          t.equal((r as Extract<ExecResult, { ok: true }>).stdout, "partial\n", `${tool}: stdout`);
        else t.same(lines, ["partial"], `${tool}: lines`);
      } else {
        t.equal(r.ok ? "ok" : r.error.kind, "timeout", `${tool} (${how}) timed out`);
      }
    }
    t.same(await untilNoneWith(tools.marker), [], "none after: the whole group is gone");
  });
}

t.test("the processes are seen while the call runs, in the tool's own process group", async (t) => {
  const tools = hangingToolDir("never-answers", ["nft"]);
  t.teardown(tools.remove);
  const runner = new ToolRunner([tools.dir]);
  const call = runner.run("nft", ["list", "tables"], { timeoutMs: UNHURRIED_MS, maxBytes: 4096 });
  // Wait for the signal (both processes exist), not for a fixed time.
  let seen = processesWith(tools.marker);
  for (let i = 0; i < 1200 && seen.length < 2; i++) {
    await new Promise((r) => setTimeout(r, 50));
    seen = processesWith(tools.marker);
  }
  t.equal(seen.length, 2, `the wrapper and its sleep: ${JSON.stringify(seen)}`);
  const wrapper = seen.find((p) => p.cmdline.includes(`${tools.dir}/nft`));
  t.ok(wrapper, "the wrapper is one of them");
  const ownPgid = Number(
    spawnSync("/bin/ps", ["-o", "pgid=", "-p", String(process.pid)], { encoding: "utf8" }).stdout.trim(),
  );
  for (const p of seen) {
    t.equal(p.pgid, wrapper?.pid, `${p.cmdline}: in the group the wrapper leads`);
    t.not(p.pgid, ownPgid, `${p.cmdline}: not in the test's group`);
  }
  runner.close();
  const r = await call;
  t.equal(r.ok ? "ok" : r.error.kind, "exec-failed", "close() ends a running call as a named failure");
  t.same(await untilNoneWith(tools.marker), [], "none after close()");
  const later = await runner.run("nft", ["list", "tables"], { timeoutMs: UNHURRIED_MS, maxBytes: 4096 });
  t.equal(later.ok ? "ok" : later.error.kind, "exec-failed", "a closed runner starts nothing");
  t.same(processesWith(tools.marker), [], "and nothing ran");
});

function scriptDir(scripts: Record<string, string[]>): { dir: string; marker: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-runpg-"));
  for (const [tool, body] of Object.entries(scripts)) {
    writeFileSync(
      join(dir, tool),
      ["#!/bin/sh", `export PROXYSCOPE_HANG_MARK='${dir}'`, ...body, ""].join("\n"),
    );
    chmodSync(join(dir, tool), 0o755);
  }
  return { dir, marker: dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

t.test("an output cap kills the whole group too", async (t) => {
  const d = scriptDir({ nft: ["/bin/sleep 1000000 &", "exec /usr/bin/yes"] });
  t.teardown(d.remove);
  const runner = new ToolRunner([d.dir]);
  const opts = { timeoutMs: UNHURRIED_MS, maxBytes: 64 * 1024 };
  const a = await runner.run("nft", [], opts);
  const b = await runner.streamLines("nft", [], opts, () => undefined);
  t.equal(a.ok ? "ok" : a.error.kind, "output-cap", "run");
  t.equal(b.ok ? "ok" : b.error.kind, "output-cap", "streamLines");
  t.same(await untilNoneWith(d.marker), [], "none after");
});

// run and streamLines judge the end of a call in one place: the same tool behaviour, the same result.
t.test("run and streamLines end a call the same way", async (t) => {
  const d = scriptDir({
    nft: ["echo 'Operation not permitted' >&2", "exit 1"],
    ipset: ["echo 'no such set' >&2", "exit 2"],
    ip: ["kill -SEGV $$"],
    ipvsadm: ["/usr/bin/head -c 200000 /dev/zero | /usr/bin/tr '\\0' e >&2", "echo fine", "exit 0"],
    "iptables-nft-save": ["exit 0"],
  });
  t.teardown(d.remove);
  const runner = new ToolRunner([d.dir]);
  const opts = { timeoutMs: UNHURRIED_MS, maxBytes: 4096 };
  const shape = (r: ExecResult | StreamResult) =>
    r.ok ? { ok: true, exitCode: r.exitCode, stderrBytes: r.stderr.length } : { ok: false, ...r.error };
  const expected: Record<string, object> = {
    nft: { ok: false, kind: "not-permitted" },
    ipset: { ok: false, kind: "exit-status", message: "ipset exited 2: no such set" },
    ip: { ok: false, kind: "exec-failed", message: "ip could not run: killed by SIGSEGV" },
    ipvsadm: { ok: true, exitCode: 0, stderrBytes: 64 * 1024 },
    "iptables-nft-save": { ok: true, exitCode: 0 },
  };
  for (const tool of Object.keys(expected) as ToolName[]) {
    const a = shape(await runner.run(tool, [], opts));
    const b = shape(await runner.streamLines(tool, [], opts, () => undefined));
    t.same(a, b, `${tool}: one result from both`);
    t.match(a, expected[tool]!, `${tool}: ${JSON.stringify(a)}`);
  }
  t.same(await untilNoneWith(d.marker), [], "none after");
});

t.test("a tool that cannot start is a named failure, never a throw", async (t) => {
  const d = scriptDir({});
  t.teardown(d.remove);
  writeFileSync(join(d.dir, "nft"), "#!/nonexistent/interpreter\n");
  chmodSync(join(d.dir, "nft"), 0o755);
  const runner = new ToolRunner([d.dir]);
  const opts = { timeoutMs: UNHURRIED_MS, maxBytes: 4096 };
  const a = await runner.run("nft", [], opts);
  const b = await runner.streamLines("nft", [], opts, () => undefined);
  t.match(a, { ok: false, error: { kind: "exec-failed", message: /ENOENT/ } }, "run");
  t.same(a, b, "streamLines: the same");
});

// EMFILE for real: a node process with 48 file descriptors fills them, then runs a tool. Before, execa
// threw ("spawn … EMFILE", "subprocess.stdio is not iterable") outside the result.
t.test("out of file descriptors: a named exec-failed with the errno, and the runner recovers", async (t) => {
  t.equal(staleBuild(["agent/io/run.ts"]), null, "dist/ is built and current");
  const script = `
    import { openSync, closeSync } from "node:fs";
    import { ToolRunner } from ${JSON.stringify(join(REPO_ROOT, "dist/agent/io/run.js"))};
    const held = [];
    for (;;) { try { held.push(openSync("/dev/null", "r")); } catch { break; } }
    const runner = new ToolRunner(["/usr/sbin", "/sbin", "/usr/bin", "/bin"]);
    const opts = { timeoutMs: 120000, maxBytes: 4096 };
    const out = {};
    try { out.run = await runner.run("ip", ["-V"], opts); } catch (e) { out.run = "threw: " + e.message; }
    try { out.stream = await runner.streamLines("ip", ["-V"], opts, () => {}); } catch (e) { out.stream = "threw: " + e.message; }
    for (const fd of held) closeSync(fd);
    out.after = await runner.run("ip", ["-V"], opts);
    process.stdout.write(JSON.stringify(out));
  `;
  const r = spawnSync(
    "/usr/bin/prlimit",
    ["--nofile=48:48", process.execPath, "--input-type=module", "-e", script],
    {
      encoding: "utf8",
      timeout: UNHURRIED_MS,
    },
  );
  t.equal(r.status, 0, `the probe process did not crash: ${r.stderr}`);
  const out = JSON.parse(r.stdout || "{}") as Record<string, unknown>;
  for (const k of ["run", "stream"]) {
    t.match(
      out[k],
      { ok: false, error: { kind: "exec-failed", message: /EMFILE/, command: "ip -V" } },
      `${k}: ${JSON.stringify(out[k])}`,
    );
  }
  t.match(out.after, { ok: true, exitCode: 0 }, "with descriptors back, the same runner runs the tool");
});
