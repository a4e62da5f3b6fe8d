// scripts/stage-kube-proxy-nft.sh, what the Dockerfile's bookworm stage runs to lay out the witness of
// kube-proxy's image nft (no Docker engine here): run on this machine's own nft, its output is a private
// directory the agent's ToolRunner starts through ld.so with lib/ first, and nothing else is needed.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t from "tap";
import { ToolRunner } from "../../../agent/io/run.js";
import { ROOT } from "./lib.js";

const SCRIPT = join(ROOT, "scripts/stage-kube-proxy-nft.sh");
const stage = (out: string, nft?: string) =>
  spawnSync("sh", [SCRIPT, out, ...(nft === undefined ? [] : [nft])], { encoding: "utf8", timeout: 30_000 });

t.test("stages nft, the libraries it loads but the C library, the loader link and its version", async (t) => {
  if (!existsSync("/usr/sbin/nft")) return t.fail("this test needs the system's nft (Debian: nftables)");
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-stage-nft-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const out = join(dir, "nft-kube-proxy");
  const r = stage(out);
  t.equal(r.status, 0, r.stderr);
  const libs = readdirSync(join(out, "lib"));
  for (const so of ["libnftables.so.1", "libnftnl.so.11", "libmnl.so.0", "libjansson.so.4", "libgmp.so.10"])
    t.ok(libs.includes(so), `lib/${so}`);
  t.notOk(
    libs.some((l) => /^(libc\.so|ld-linux)/.test(l)),
    "no C library nor loader: the runtime's own glibc",
  );
  t.match(
    readlinkSync(join(out, "ld.so")),
    /^\/lib(64)?\/ld-linux[-\w.]*\.so\.\d$/,
    "the loader the binary names",
  );
  const version = readFileSync(join(out, "version"), "utf8");
  t.match(version, /^nftables v\d+\.\d+/);
  // The agent runs it as the witness: through the loader, lib/ first.
  const ex = await new ToolRunner(["/nonexistent"], undefined, out).run("kube-proxy-nft", ["--version"], {
    timeoutMs: 10_000,
    maxBytes: 4096,
  });
  t.equal(ex.ok && ex.stdout, version, "the ToolRunner starts it");
});

t.test("no nft at the path given: a named refusal, nothing staged", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-stage-nft-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const r = stage(join(dir, "out"), join(dir, "no-nft"));
  t.equal(r.status, 2);
  t.match(r.stderr, /no nft at /);
  t.notOk(existsSync(join(dir, "out")));
});
