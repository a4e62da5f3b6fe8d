import t from "tap";
import { type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { VerifyResult } from "../../common/verify-result.js";
import { NetNs, netnsAvailable } from "../helpers/netns.js";

// `verify` passing on a clean nftables node, for real: in a network namespace on the host kernel
// (where nftables has the ip family that UML lacks), a kube-proxy-shaped `table ip kube-proxy` DNATs
// the `kubernetes` Service's ClusterIP 10.96.0.1:443 to an apiserver-like TCP listener on the node's
// own address, so verify's connect goes through real nftables rules. kube-proxy's endpoints are the
// STAND-IN (test/standins/kube-proxy.ts). Needs `npx tsc -p .`.

const ROOT = new URL("../../", import.meta.url).pathname;
const AGENT = join(ROOT, "dist/agent/cli.js");
const STANDIN = join(ROOT, "dist/test/standins/kube-proxy.js");

// Shaped like kube-proxy's 1.34 table (pkg/proxy/nftables/proxier.go names), one Service, one endpoint.
const KUBE_PROXY_TABLE = `
add table ip kube-proxy { comment "rules for kube-proxy" ; }
add set ip kube-proxy cluster-ips { type ipv4_addr ; comment "Active ClusterIPs" ; }
add map ip kube-proxy service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; comment "ClusterIP, ExternalIP and LoadBalancer IP traffic" ; }
add chain ip kube-proxy nat-output { type nat hook output priority -100 ; }
add chain ip kube-proxy nat-prerouting { type nat hook prerouting priority -100 ; }
add chain ip kube-proxy services
add chain ip kube-proxy service-2QRHZV4L-default/kubernetes/tcp/https
add chain ip kube-proxy endpoint-XQ3C7NHG-default/kubernetes/tcp/https__10.0.0.1/6443
add rule ip kube-proxy nat-output jump services
add rule ip kube-proxy nat-prerouting jump services
add rule ip kube-proxy services ip daddr . meta l4proto . th dport vmap @service-ips
add rule ip kube-proxy service-2QRHZV4L-default/kubernetes/tcp/https numgen random mod 1 vmap { 0 : goto endpoint-XQ3C7NHG-default/kubernetes/tcp/https__10.0.0.1/6443 }
add rule ip kube-proxy endpoint-XQ3C7NHG-default/kubernetes/tcp/https__10.0.0.1/6443 meta l4proto tcp dnat to 10.0.0.1:6443
add element ip kube-proxy cluster-ips { 10.96.0.1 }
add element ip kube-proxy service-ips { 10.96.0.1 . tcp . 443 : goto service-2QRHZV4L-default/kubernetes/tcp/https }
`;

const LISTENER = `
const s = require("node:net").createServer((c) => c.end());
s.listen(6443, "10.0.0.1", () => console.log("listening"));
`;

const reason = netnsAvailable() ? null : "cannot create network namespaces here (needs root)";
if (reason !== null) t.fail(`${reason}; this test does not skip silently`);
else {
  const ns = NetNs.create();
  const children: ChildProcess[] = [];
  t.teardown(() => {
    for (const c of children) c.kill("SIGTERM");
    ns.destroy();
  });
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-verify-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));

  const start = (argv: string[]) => ns.start(argv, children);
  const kubeProxy = async (name: string, scenario: object): Promise<string[]> => {
    writeFileSync(join(dir, `${name}.json`), JSON.stringify(scenario));
    const { line } = await start([process.execPath, STANDIN, join(dir, `${name}.json`)]);
    const [, metrics, health] = line.split(" ");
    return [
      "--kube-proxy-metrics-url",
      `http://127.0.0.1:${metrics}`,
      "--kube-proxy-health-url",
      `http://127.0.0.1:${health}`,
    ];
  };
  const verify = (args: string[], env: Record<string, string> = {}) => {
    const r = ns.exec([
      "env",
      ...Object.entries(env).map(([k, v]) => `${k}=${v}`),
      process.execPath,
      AGENT,
      "verify",
      "--node",
      "netns-node",
      ...args,
    ]);
    return r;
  };
  const parse = (stdout: string) => VerifyResult.parse(JSON.parse(stdout));
  const statuses = (v: VerifyResult) => Object.fromEntries(v.checks.map((c) => [c.id, c.status]));

  ns.must(["ip", "link", "set", "lo", "up"]);
  ns.must(["ip", "link", "add", "eth0", "type", "veth", "peer", "name", "eth1"]);
  ns.must(["ip", "addr", "add", "10.0.0.1/24", "dev", "eth0"]);
  ns.must(["ip", "link", "set", "eth0", "up"]);
  ns.must(["ip", "link", "set", "eth1", "up"]);
  ns.must(["ip", "route", "add", "default", "via", "10.0.0.254", "dev", "eth0"]);
  ns.loadNft(KUBE_PROXY_TABLE);
  const listener = await start([process.execPath, "-e", LISTENER]);
  const healthy = await kubeProxy("healthy", {
    mode: "nftables",
    version: "v1.34.0",
    metricsAddress: "127.0.0.1:0",
    healthAddress: "127.0.0.1:0",
    lastSync: { agoSeconds: 2 },
    lastQueued: { agoSeconds: 2 },
    healthy: true,
  });

  t.test(
    "a clean nftables node passes, its Service reached through kube-proxy's nftables DNAT",
    async (t) => {
      const r = verify([...healthy, "--service-address", "10.96.0.1:443", "--sync-window-s", "1"]);
      t.equal(r.code, 0, "exit 0", { stdout: r.stdout, stderr: r.stderr });
      t.match(r.stdout, /^kube-proxy nftables table\s+ok \(ip kube-proxy\)$/m);
      t.match(r.stdout, /^nftables sync failures not rising\s+ok \(0 over (?:[1-9]\d*)(?:\.\d)? s\)$/m);
      t.match(r.stdout, /^Service connect \(from the host network\)\s+ok \(10\.96\.0\.1:443 in \d+ ms\)$/m);
      t.match(r.stdout, /^verify netns-node: PASS$/m);
      t.notMatch(r.stdout, /FAIL/);
    },
  );

  t.test("the Service address comes from the pod environment when no flag gives it", async (t) => {
    const r = verify([...healthy, "--sync-window-s", "0", "--json"], {
      KUBERNETES_SERVICE_HOST: "10.96.0.1",
      KUBERNETES_SERVICE_PORT: "443",
    });
    t.equal(r.code, 0, "exit 0", { stdout: r.stdout });
    const v = parse(r.stdout);
    t.equal(v.passed, true);
    t.match(v.checks.find((c) => c.id === "service-connect")?.detail ?? "", /^10\.96\.0\.1:443 in/);
  });

  t.test("no Service address: the connect is not run and that fails, unless --skip-connect", async (t) => {
    const r = verify([...healthy, "--sync-window-s", "0"]);
    t.equal(r.code, 1);
    t.match(r.stdout, /^Service connect \(from the host network\)\s+FAIL \(not run: no Service address/m);
    const skipped = verify([...healthy, "--sync-window-s", "0", "--skip-connect", "--json"]);
    t.equal(skipped.code, 0);
    t.equal(statuses(parse(skipped.stdout))["service-connect"], "skipped");
  });

  t.test("rules present but nothing behind them: the connect fails, and only it", async (t) => {
    // The DNAT still happens; the endpoint is gone. Exactly what no inspection of the rules can see.
    listener.child.kill("SIGTERM");
    await new Promise((r) => listener.child.once("exit", r));
    const r = verify([...healthy, "--service-address", "10.96.0.1:443", "--sync-window-s", "0", "--json"]);
    t.equal(r.code, 1);
    const v = parse(r.stdout);
    const failed = v.checks.filter((c) => c.status === "fail").map((c) => c.id);
    t.same(failed, ["service-connect"]);
    t.match(v.checks.find((c) => c.id === "service-connect")?.detail ?? "", /10\.96\.0\.1:443: ECONNREFUSED/);
    // Every other check passed, but parity and the NodePort connect: neither asked for here, and each says so.
    t.same(
      v.checks.filter((c) => c.status !== "ok" && c.status !== "fail").map((c) => [c.id, c.status, c.detail]),
      [
        ["service-parity", "skipped", "not asked (no --parity-snapshot)"],
        [
          "nodeport-connect",
          "skipped",
          "not asked: --nodeport-connect opens one TCP connection to a NodePort on each address",
        ],
      ],
    );
  });

  t.test("failing syncs and stale rules are named", async (t) => {
    const failing = await kubeProxy("failing", {
      mode: "nftables",
      version: "v1.37.0",
      metricsAddress: "127.0.0.1:0",
      healthAddress: "127.0.0.1:0",
      lastSync: { agoSeconds: 900 },
      lastQueued: { agoSeconds: 5 },
      healthy: false,
      counters: { kubeproxy_sync_proxy_rules_nftables_sync_failures_total: 42 },
    });
    const r = verify([...failing, "--skip-connect", "--sync-window-s", "0"]);
    t.equal(r.code, 1);
    t.match(
      r.stdout,
      /^nftables sync failures not rising\s+FAIL \(42 failures \(single read, --sync-window-s 0 wants 0\)\)$/m,
    );
    t.match(r.stdout, /^last successful sync fresh\s+FAIL \(\d+ s ago \(limit 300 s\)\)$/m);
    t.match(r.stdout, /^proxy mode \(\/proxyMode\)\s+ok$/m);
  });

  t.test("a node still in iptables mode fails on the mode kube-proxy answers", async (t) => {
    const iptables = await kubeProxy("iptables", {
      mode: "",
      version: "v1.33.0",
      metricsAddress: "127.0.0.1:0",
      healthAddress: "127.0.0.1:0",
      lastSync: { agoSeconds: 2 },
      healthy: true,
    });
    const r = verify([...iptables, "--skip-connect", "--sync-window-s", "0", "--json"]);
    t.equal(r.code, 1);
    const v = parse(r.stdout);
    t.equal(statuses(v)["proxy-mode"], "fail");
    t.equal(v.checks.find((c) => c.id === "proxy-mode")?.detail, 'kube-proxy answers "iptables"');
  });
}
