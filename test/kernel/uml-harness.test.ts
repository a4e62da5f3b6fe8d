import t from "tap";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  bootUml,
  hostScratchDir,
  REPO_ROOT,
  UmlBootError,
  UmlUnavailableError,
  umlRunsHere,
  umlUnavailableReason,
} from "../helpers/uml.js";

// A loaded 2-core machine (load 8-17) slows a UML guest several times over: its deadline and this
// file's (tap's default is 600 s) leave room for that; a guest that hangs is still killed.
t.setTimeout(1_200_000);

// The UML harness itself: what a script prints and its exit status come back, writes under a host
// directory land on the host, modules that do not load are named, and a guest that runs too long is
// killed with every process UML forked.

t.test("a missing kernel is a clear error, before anything starts", async (t) => {
  const kernel = "/nonexistent/linux.uml";
  t.match(umlUnavailableReason(kernel), /\/nonexistent\/linux\.uml not found .* user-mode-linux/);
  await t.rejects(bootUml({ script: "true", kernel }), UmlUnavailableError);
});

const reason = umlUnavailableReason();
if (reason !== null) {
  t.fail(`User-Mode Linux is needed for this test and does not skip silently: ${reason}`);
} else if (umlRunsHere(t)) {
  t.test("output, exit status, environment, host writes, failed modules", async (t) => {
    const out = hostScratchDir("proxyscope-harness-");
    t.teardown(out.remove);
    const r = await bootUml({
      script: [
        "echo to stdout",
        "echo to stderr >&2",
        'echo "cwd=$(pwd) greeting=$GREETING"',
        'uname -r > "$OUT/release"',
        "node -e 'console.log(\"node\", process.version)'",
        "ip netns add probe && ip -n probe link show lo >/dev/null && echo netns ok",
        "printf 'no newline at the end'",
        "exit 7",
      ].join("\n"),
      modules: ["ip_vs", "dummy", "no_such_module"],
      env: { OUT: out.path, GREETING: "it's here" },
      memMb: 384,
    });
    t.equal(r.exitCode, 7);
    t.equal(
      r.output,
      [
        "to stdout",
        "to stderr",
        `cwd=${REPO_ROOT} greeting=it's here`,
        `node ${process.version}`,
        "netns ok",
        "no newline at the end",
      ].join("\n"),
    );
    t.same(r.modulesFailed, ["no_such_module"]);
    t.match(r.console, /@@PROXYSCOPE-END [0-9a-f]+ rc=7@@/);
    t.equal(readFileSync(join(out.path, "release"), "utf8").trim(), "6.1.176");
    t.notOk(existsSync(r.workDir), "the work directory is removed");
  });

  t.test("past its deadline the guest is killed, all of it", async (t) => {
    const err = await bootUml({ script: "echo waiting; sleep 600", timeoutMs: 30_000, modules: [] }).then(
      () => null,
      (e: unknown) => e,
    );
    t.type(err, UmlBootError);
    if (!(err instanceof UmlBootError)) return;
    t.match(err.message, /did not finish within 30000 ms and was killed/);
    t.match(err.console, /waiting/, "the console so far comes with the error");
    // No process is left that was started for this boot (its work directory is in UML's argv).
    const left = readdirSync("/proc")
      .filter((p) => /^\d+$/.test(p))
      .filter((p) => {
        try {
          return readFileSync(`/proc/${p}/cmdline`, "utf8").includes(err.workDir);
        } catch {
          return false;
        }
      });
    t.same(left, [], "no UML process survives");
  });
}
