// The cleanup interlock once trusted whoever answered on 127.0.0.1:10249 — with kube-proxy
// stopped, an unprivileged process answering "nftables" let `cleanup --apply` run. In a fresh network
// namespace, a real listener on 127.0.0.1:10249 / :10256 (the kube-proxy STAND-IN, answering nftables
// mode) and the real agent CLI running `cleanup --apply`: started by a copy of node named
// `kube-proxy` it is accepted; started as `node`, or as a `kube-proxy` that is not root, it is
// refused (exit 4) with a reason that names the process. The namespace holds no ipvs state, so an
// accepted cleanup has nothing to change.
import { spawn } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t from "tap";
import { kubeProxyVerified } from "../../agent/cleanup/listener-owner.js";
import { configz, emptyFacts, noKernelState } from "../helpers/facts.js";
import { reportOf } from "../helpers/reports.js";
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

t.test("a socket no visible process holds: refused, saying why and how to confirm", async (t) => {
  // A /proc as a container without the host's PID namespace sees it: the LISTEN socket, no holder.
  const proc = join(dir, "proc");
  const header =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";
  mkdirSync(join(proc, "net"), { recursive: true });
  mkdirSync(join(proc, "1", "fd"), { recursive: true });
  writeFileSync(
    join(proc, "net", "tcp"),
    `${header}   0: 0100007F:2809 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0000000000000000 100 0 0 10 0\n`,
  );
  writeFileSync(join(proc, "net", "tcp6"), header);
  // As the scan saw it: /proxyMode, /configz and /healthz all answered, in nftables mode.
  const report = reportOf(
    emptyFacts({
      ...noKernelState,
      proxyMode: { mode: "nftables" },
      configz: configz({ mode: "nftables" }),
      kubeProxyHealth: {
        status: 200,
        shape: "v1.33+",
        healthy: true,
        lastUpdated: null,
        currentTime: null,
        nodeEligible: true,
      },
    }),
  );
  const verify = (metricsUrl: string) =>
    kubeProxyVerified(report, { procRoot: proc, metricsUrl, timeoutMs: 60_000 });
  const r = await verify("http://127.0.0.1:10249");
  t.equal(r.ok, false);
  t.match(
    !r.ok && r.reason,
    /no process this agent can see holds the socket listening on 127\.0\.0\.1:10249/,
  );
  t.match(!r.ok && r.reason, /ss -ltnp 'sport = :10249'/);
  const none = await verify("http://127.0.0.1:10250");
  t.match(!none.ok && none.reason, /nothing listens on 127\.0\.0\.1:10250/);
  // The socket is on 127.0.0.1: a URL naming the node address is not answered by it.
  const elsewhere = await verify("http://10.77.0.2:10249");
  t.match(!elsewhere.ok && elsewhere.reason, /nothing listens on 10\.77\.0\.2:10249/);
  // /configz and /healthz must agree with /proxyMode before any socket is looked at.
  const factsWith = (over: object) => reportOf(emptyFacts({ ...noKernelState, ...report.facts, ...over }));
  const ipvsConfig = await kubeProxyVerified(factsWith({ configz: configz({ mode: "ipvs" }) }), {
    procRoot: proc,
    metricsUrl: "http://127.0.0.1:10249",
    timeoutMs: 60_000,
  });
  t.match(
    !ipvsConfig.ok && ipvsConfig.reason,
    /\/configz says mode "ipvs", while \/proxyMode said "nftables"/,
  );
  const noHealth = await kubeProxyVerified(factsWith({ kubeProxyHealth: null }), {
    procRoot: proc,
    metricsUrl: "http://127.0.0.1:10249",
    timeoutMs: 60_000,
  });
  t.match(!noHealth.ok && noHealth.reason, /\/healthz did not answer in kube-proxy's format/);
  const wildcard = await verify("http://0.0.0.0:10249");
  t.match(!wildcard.ok && wildcard.reason, /names the wildcard address 0\.0\.0\.0/);
  const named = await verify("http://localhost:10249");
  t.match(!named.ok && named.reason, /names the host "localhost", not an address/);
});
