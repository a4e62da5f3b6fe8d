import { mkdirSync, symlinkSync } from "node:fs";
import t, { type Test } from "tap";
import { kubeProxyVerified } from "../../../agent/cleanup/listener-owner.js";
import { configz, emptyFacts, noKernelState } from "../../helpers/facts.js";
import { tree } from "../../helpers/probe-context.js";
import { reportOf } from "../../helpers/reports.js";

// The interlock over a /proc tree in the kernel's formats (net/ipv4/tcp_ipv4.c get_tcp4_sock,
// net/ipv6/tcp_ipv6.c get_tcp6_sock; fs/proc/base.c for fd, exe and status): kube-proxy (pid 4242,
// root, executable named kube-proxy) holds a wildcard [::]:10249 listener, which takes 127.0.0.1's
// connections too. Whatever else listens there must be seen: a table not read, or a line not
// understood, is not "no other listener".
const HEAD =
  "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";
const line = (addr: string, inode: number) =>
  `   0: ${addr}:2809 ${"0".repeat(addr.length)}:0000 0A 00000000:00000000 00:00000000 00000000     0        0 ${inode} 1 0000000000000000 100 0 0 10 0\n`;
const TCP6 = HEAD + line("0".repeat(32), 5001);

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

function procWith(t: Test, net: Record<string, string | Record<string, string>>): string {
  const proc = tree(t, {
    net,
    "4242": {
      status: "Name:\tkube-proxy\nUid:\t0\t0\t0\t0\n",
      cmdline: "/usr/local/bin/kube-proxy\0--v=2\0",
    },
  });
  mkdirSync(`${proc}/4242/fd`);
  symlinkSync("socket:[5001]", `${proc}/4242/fd/3`);
  symlinkSync("/usr/local/bin/kube-proxy", `${proc}/4242/exe`);
  return proc;
}
const verify = (procRoot: string) =>
  kubeProxyVerified(report, { procRoot, metricsUrl: "http://127.0.0.1:10249", timeoutMs: 60_000 });

t.test("kube-proxy alone on the wildcard: accepted (the tree is one the interlock can pass)", async (t) => {
  t.same(await verify(procWith(t, { tcp: HEAD, tcp6: TCP6 })), { ok: true });
});

t.test("tcp not read while tcp6 was: refused, never read as no IPv4 listener", async (t) => {
  const r = await verify(procWith(t, { tcp: { "not-a-table": "" }, tcp6: TCP6 }));
  t.equal(r.ok, false);
  t.match(!r.ok && r.reason, /\/net\/tcp/);
});

t.test("a tcp line not understood: refused, never skipped", async (t) => {
  const r = await verify(procWith(t, { tcp: HEAD + line("0100007G", 4242), tcp6: TCP6 }));
  t.equal(r.ok, false);
  t.match(!r.ok && r.reason, /not a \/proc\/net\/tcp socket line/);
});

t.test("a LISTEN socket on 127.0.0.1:10249 with inode 0 is a socket no one is seen to hold", async (t) => {
  const r = await verify(procWith(t, { tcp: HEAD + line("0100007F", 0), tcp6: TCP6 }));
  t.equal(r.ok, false);
  t.match(
    !r.ok && r.reason,
    /no process this agent can see holds the socket listening on 127\.0\.0\.1:10249/,
  );
});

t.test("a socket no visible process holds: refused, saying why and how to confirm", async (t) => {
  // A /proc as a container without the host's PID namespace sees it: the LISTEN socket, no holder.
  const proc = tree(t, { net: { tcp: HEAD + line("0100007F", 4242), tcp6: HEAD }, "1": { fd: {} } });
  const at = (metricsUrl: string) =>
    kubeProxyVerified(report, { procRoot: proc, metricsUrl, timeoutMs: 60_000 });
  const r = await at("http://127.0.0.1:10249");
  t.equal(r.ok, false);
  t.match(
    !r.ok && r.reason,
    /no process this agent can see holds the socket listening on 127\.0\.0\.1:10249/,
  );
  t.match(!r.ok && r.reason, /ss -ltnp 'sport = :10249'/);
  const none = await at("http://127.0.0.1:10250");
  t.match(!none.ok && none.reason, /nothing listens on 127\.0\.0\.1:10250/);
  // The socket is on 127.0.0.1: a URL naming the node address is not answered by it.
  const elsewhere = await at("http://10.77.0.2:10249");
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
  const wildcard = await at("http://0.0.0.0:10249");
  t.match(!wildcard.ok && wildcard.reason, /names the wildcard address 0\.0\.0\.0/);
  const named = await at("http://localhost:10249");
  t.match(!named.ok && named.reason, /names the host "localhost", not an address/);
});
