// The cleanup interlock once trusted whoever answered on 127.0.0.1:10249 — with kube-proxy
// stopped, an unprivileged process answering "nftables" let `cleanup --apply` run. In a fresh network
// namespace, a real listener on 127.0.0.1:10249 / :10256 (the kube-proxy STAND-IN, answering nftables
// mode) and the real agent CLI running `cleanup --apply`: started by a copy of node named
// `kube-proxy` it is accepted; started as `node`, or as a `kube-proxy` that is not root, it is
// refused (exit 4) with a reason that names the process. The namespace holds no ipvs state, so an
// accepted cleanup has nothing to change.
import { spawn } from "node:child_process";
import { chmodSync, copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t from "tap";
import { AGENT_CLI, STANDIN } from "../helpers/standin.js";
import { agentBuilt } from "../e2e/agent-process.js";

t.setTimeout(1_800_000);
const skip = (!agentBuilt() && "run npx tsc -p . first") || (process.getuid?.() !== 0 && "needs root");

const dir = mkdtempSync(join(tmpdir(), "proxyscope-interlock-"));
chmodSync(dir, 0o755); // the unprivileged listener runs its copy of node and reads its scenario here
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const kubeProxy = join(dir, "kube-proxy");
copyFileSync(process.execPath, kubeProxy);
const scenario = join(dir, "scenario.json");
writeFileSync(
  scenario,
  JSON.stringify({
    mode: "nftables",
    version: "v1.33.1",
    metricsAddress: "127.0.0.1:10249",
    healthAddress: "127.0.0.1:10256",
  }),
);
const tools = join(dir, "no-tools"); // no tools: nothing to read, nothing to remove

/** In its own network namespace: start the listener, wait for its "ready" line, run cleanup --apply. */
function cleanupAgainst(listener: string[]): Promise<{ code: number | null; out: string }> {
  const script = [
    "ip link set lo up",
    `mkdir -p ${tools}`,
    `"$@" > "${dir}/ready.$$" 2>&1 &`,
    "LISTENER=$!",
    // A signal, not a deadline: the stand-in prints "ready" once it listens (or exits).
    `while ! grep -q ready "${dir}/ready.$$"; do kill -0 $LISTENER 2>/dev/null || { cat "${dir}/ready.$$"; exit 98; }; sleep 0.2; done`,
    `"${process.execPath}" "${AGENT_CLI}" cleanup --apply --node interlock --tool-dir ${tools}` +
      " --kube-proxy-metrics-url http://127.0.0.1:10249 --kube-proxy-health-url http://127.0.0.1:10256" +
      " --call-timeout-ms 60000 --probe-timeout-ms 120000",
    "RC=$?",
    "kill $LISTENER; wait $LISTENER 2>/dev/null",
    'echo "rc=$RC"',
  ].join("\n");
  return new Promise((resolve) => {
    const child = spawn("unshare", ["-n", "sh", "-c", script, "sh", ...listener], {
      stdio: ["ignore", "pipe", "pipe"],
      // Not tap's instrumentation: it writes under .tap/, which an unprivileged listener may not.
      env: { ...process.env, NODE_OPTIONS: "" },
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.on("close", () => {
      const rc = /rc=(\d+)\s*$/.exec(out);
      resolve({ code: rc ? Number(rc[1]) : null, out });
    });
  });
}

t.test("kube-proxy (a root process named kube-proxy) is accepted", { skip }, async (t) => {
  const r = await cleanupAgainst([kubeProxy, STANDIN, scenario]);
  t.equal(r.code, 0, r.out.slice(-2000));
  t.match(r.out, /applied/);
});

t.test("an impostor answering nftables on 10249 is refused", { skip }, async (t) => {
  const r = await cleanupAgainst([process.execPath, STANDIN, scenario]);
  t.equal(r.code, 4, r.out.slice(-2000));
  t.match(r.out, /REFUSED/);
  t.match(
    r.out,
    /the process listening on 127\.0\.0\.1:10249 is not kube-proxy: pid \d+ \(executable "[^"]*node"/,
  );
});

t.test("a process named kube-proxy that is not root is refused", { skip }, async (t) => {
  const r = await cleanupAgainst([
    "setpriv",
    "--reuid=65534",
    "--regid=65534",
    "--clear-groups",
    kubeProxy,
    STANDIN,
    scenario,
  ]);
  t.equal(r.code, 4, r.out.slice(-2000));
  t.match(r.out, /does not run as root/);
});
