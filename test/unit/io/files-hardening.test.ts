// Regressions from the fault matrix (test/e2e/agent-fault-matrix.test.ts). The deadlines are generous (a
// slow 2-core machine passes easily) and fail only on the old behaviour: minutes of CPU, or a hang.
import { closeSync, mkdtempSync, openSync, rmSync, truncateSync, writeFileSync, constants } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t from "tap";
import { readLines, readTextFile } from "../../../common/regular-file.js";
import { ToolRunner } from "../../../agent/io/run.js";
import { sysctlsProbe } from "../../../agent/probes/sysctls.js";
import type { ProbeContext } from "../../../agent/probes/types.js";

const dir = mkdtempSync(join(tmpdir(), "proxyscope-files-"));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test("a file without newlines streams in linear time and stops at the line cap", async (t) => {
  const p = join(dir, "no-newlines");
  writeFileSync(p, "");
  truncateSync(p, 200 * 1024 * 1024); // sparse: 200 MB of NUL and no newline
  const started = performance.now();
  let lines = 0;
  const r = await readLines(p, () => lines++, 256 * 1024 * 1024);
  t.ok(performance.now() - started < 120_000, "well within 120 s (was quadratic: hours at this size)");
  t.match(r, { ok: false, error: { kind: "output-cap", message: /line longer than/ } });
  t.equal(lines, 0);
});

t.test("lines split across reads are still whole", async (t) => {
  const p = join(dir, "many-lines");
  const want = Array.from({ length: 50_000 }, (_, i) => `line ${i} ${"x".repeat(i % 97)}`);
  writeFileSync(p, `${want.join("\n")}\nlast without newline`);
  const got: string[] = [];
  t.same(await readLines(p, (l) => got.push(l), 64 * 1024 * 1024), { ok: true });
  t.same(got, [...want, "last without newline"]);
});

t.test("a FIFO in place of a file is refused at once, not read forever", async (t) => {
  const p = join(dir, "fifo");
  execFileSync("/usr/bin/mkfifo", [p]);
  t.teardown(() => {
    try {
      closeSync(openSync(p, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // nobody is blocked reading: the fix holds
    }
  });
  t.match(await readTextFile(p), {
    ok: false,
    missing: false,
    error: { kind: "io", message: /not a regular file/ },
  });
  t.match(await readLines(p, () => {}, 1024), { ok: false, error: { kind: "io" } });
});

t.test("a tool printing one endless line is stopped at the line cap", async (t) => {
  const tools = join(dir, "tools");
  execFileSync("/bin/mkdir", [tools]);
  writeFileSync(join(tools, "iptables-nft-save"), "#!/bin/sh\nexec /usr/bin/tr '\\000' x </dev/zero\n", {
    mode: 0o755,
  });
  const started = performance.now();
  const r = await new ToolRunner([tools]).streamLines(
    "iptables-nft-save",
    ["-c"],
    { timeoutMs: 600_000, maxBytes: 512 * 1024 * 1024 },
    () => {},
  );
  t.ok(performance.now() - started < 300_000, "stopped long before its timeout");
  t.match(r, { ok: false, error: { kind: "output-cap", message: /line longer than/ } });
});

t.test("a sysctl that is not an integer is garbage, not a value", async (t) => {
  const proc = join(dir, "proc");
  execFileSync("/bin/mkdir", ["-p", join(proc, "sys/net/ipv4")]);
  writeFileSync(join(proc, "sys/net/ipv4/ip_forward"), "\u001b[2J<b>1</b>\n");
  const r = await sysctlsProbe.run({ procRoot: proc } as ProbeContext);
  t.match(r, { ok: false, error: { kind: "garbage", command: /ip_forward$/ } });
  writeFileSync(join(proc, "sys/net/ipv4/ip_forward"), "1\n");
  const ok = await sysctlsProbe.run({ procRoot: proc } as ProbeContext);
  t.ok(ok.ok, "an integer reads");
});

t.test(
  "a file on disk already bigger than the cap is refused from its size, without reading it",
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), "proxyscope-big-"));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, "status");
    writeFileSync(path, "");
    truncateSync(path, 300 * 1024 * 1024); // sparse: no disk used
    const r = await readTextFile(path, 1024 * 1024);
    t.equal(r.ok, false);
    if (!r.ok) t.match(r.error, { kind: "output-cap", message: /\(314572800\)$/ }, "decided from the size");
    const l = await readLines(path, () => t.fail("no line is read"), 1024 * 1024);
    t.equal(l.ok === false && l.error.kind, "output-cap");
  },
);
