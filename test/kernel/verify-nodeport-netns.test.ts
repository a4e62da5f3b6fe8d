import t from "tap";
import { type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { VerifyResult } from "../../common/verify-result.js";
import { NetNs, netnsAvailable } from "../helpers/netns.js";

// verify's NodePort check on the node's own addresses, on real nftables state. A network
// namespace (the host kernel has the ip family UML lacks) holds a primary address, a secondary one, a CNI
// bridge's and a DNS cache's address, and kube-proxy's own 1.34 ruleset, verbatim from its proxier_test
// (test/fixtures/netfilter/sources/kube-proxy-nft-v1.34-ip.nft): `nodeport-ips` holds only the primary
// 192.168.0.2, which is what `--nodeport-addresses primary` (nftables mode's default) programs. Its
// NodePorts 3001-3003 DNAT to the endpoint 10.180.0.3:80, a listener here on lo, so a connect goes through
// kube-proxy's real rules. kube-proxy's endpoints are the STAND-IN (test/standins/kube-proxy.ts).
// Needs `npx tsc -p .`.

const ROOT = new URL("../../", import.meta.url).pathname;
const AGENT = join(ROOT, "dist/agent/cli.js");
const STANDIN = join(ROOT, "dist/test/standins/kube-proxy.js");
const RULESET = readFileSync(
  join(ROOT, "test/fixtures/netfilter/sources/kube-proxy-nft-v1.34-ip.nft"),
  "utf8",
);

const LISTENER = `
const s = require("node:net").createServer((c) => c.end());
s.listen(80, "10.180.0.3", () => console.log("listening"));
`;

const reason = netnsAvailable() ? null : "cannot create network namespaces here";
if (reason !== null) t.fail(`${reason}; this test does not skip silently`);
else {
  const ns = NetNs.create();
  const children: ChildProcess[] = [];
  t.teardown(() => {
    for (const c of children) c.kill("SIGTERM");
    ns.destroy();
  });
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-verify-np-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));

  const start = async (argv: string[]) => (await ns.start(argv, children)).line;

  const veth = (name: string, address: string) => {
    ns.must(["ip", "link", "add", name, "type", "veth", "peer", "name", `${name}p`]);
    ns.must(["ip", "addr", "add", address, "dev", name]);
    ns.must(["ip", "link", "set", name, "up"]);
    ns.must(["ip", "link", "set", `${name}p`, "up"]);
  };
  ns.must(["ip", "link", "set", "lo", "up"]);
  veth("eth0", "192.168.0.2/24");
  veth("eth2", "192.168.1.2/24");
  // Named as the CNI bridge plugin and NodeLocal DNSCache name theirs: no NodePort client uses them.
  veth("cni0", "10.244.0.1/24");
  veth("nodelocaldns", "169.254.20.10/32");
  ns.must(["ip", "route", "add", "default", "via", "192.168.0.1", "dev", "eth0"]);
  ns.must(["ip", "addr", "add", "10.180.0.3/32", "dev", "lo"]);
  ns.loadNft(RULESET);
  await start([process.execPath, "-e", LISTENER]);
  writeFileSync(
    join(dir, "kp.json"),
    JSON.stringify({
      mode: "nftables",
      version: "v1.34.0",
      metricsAddress: "127.0.0.1:0",
      healthAddress: "127.0.0.1:0",
      lastSync: { agoSeconds: 2 },
      lastQueued: { agoSeconds: 2 },
      healthy: true,
    }),
  );
  const [, metrics, health] = (await start([process.execPath, STANDIN, join(dir, "kp.json")])).split(" ");
  const kp = [
    "--kube-proxy-metrics-url",
    `http://127.0.0.1:${metrics}`,
    "--kube-proxy-health-url",
    `http://127.0.0.1:${health}`,
  ];
  const verify = (args: string[]) =>
    ns.exec([process.execPath, AGENT, "verify", "--node", "np-node", "--sync-window-s", "0", ...kp, ...args]);
  const json = (args: string[]) => {
    const r = verify([...args, "--json"]);
    return { code: r.code, v: VerifyResult.parse(JSON.parse(r.stdout)), stderr: r.stderr };
  };
  const line = (v: VerifyResult, id: string) => v.checks.find((c) => c.id === id);

  t.test("nodeport-ips holds only the primary: the secondary address is named as not served", async (t) => {
    const { code, v } = json(["--skip-connect", "--node-ip", "192.168.0.2"]);
    t.equal(code, 1, "verify fails");
    const np = line(v, "nodeport-addresses");
    t.equal(np?.status, "fail");
    t.match(np?.detail ?? "", /not served: 192\.168\.1\.2 \(eth2\)/);
    t.match(np?.detail ?? "", /served: 192\.168\.0\.2 \(eth0\)/);
    t.match(np?.detail ?? "", /nodeport-ips/);
    // The CNI bridge's and the DNS cache's addresses are named and skipped, the way nodeport-addresses-shrink skips them.
    t.match(np?.detail ?? "", /skipped: 10\.244\.0\.1 \(cni0\)/);
    t.match(np?.detail ?? "", /169\.254\.20\.10 \(nodelocaldns\)/);
    t.notMatch(np?.detail ?? "", /10\.180\.0\.3/, "lo is no NodePort destination");
    // The connect is only tried when asked: it sends traffic.
    t.equal(line(v, "nodeport-connect")?.status, "skipped");
    t.match(line(v, "nodeport-connect")?.detail ?? "", /--nodeport-connect/);
  });

  t.test(
    "asked to connect: the primary answers through kube-proxy's DNAT, the secondary does not",
    async (t) => {
      const { code, v } = json(["--skip-connect", "--nodeport-connect", "--node-ip", "192.168.0.2"]);
      t.equal(code, 1);
      const c = line(v, "nodeport-connect");
      t.equal(c?.status, "fail");
      // 3002 is the lowest TCP NodePort in service-nodeports that no-endpoint-nodeports does not drop.
      t.match(c?.detail ?? "", /192\.168\.1\.2:3002: ECONNREFUSED/);
      t.match(c?.detail ?? "", /192\.168\.0\.2:3002 in \d+ ms/);
      t.notMatch(c?.detail ?? "", /10\.244\.0\.1|169\.254\.20\.10/, "skipped addresses get no traffic");
    },
  );

  t.test("nodeport-ips holding the secondary too: both served, both answer", async (t) => {
    ns.must(["nft", "add", "element", "ip", "kube-proxy", "nodeport-ips", "{ 192.168.1.2 }"]);
    const { v } = json(["--skip-connect", "--nodeport-connect", "--node-ip", "192.168.0.2"]);
    t.equal(line(v, "nodeport-addresses")?.status, "ok", line(v, "nodeport-addresses")?.detail ?? "");
    t.equal(line(v, "nodeport-connect")?.status, "ok", line(v, "nodeport-connect")?.detail ?? "");
    t.match(line(v, "nodeport-connect")?.detail ?? "", /192\.168\.1\.2:3002 in \d+ ms/);
    ns.must(["nft", "delete", "element", "ip", "kube-proxy", "nodeport-ips", "{ 192.168.1.2 }"]);
  });

  t.test("the text output names the line", async (t) => {
    const r = verify(["--skip-connect", "--node-ip", "192.168.0.2"]);
    t.match(
      r.stdout,
      /^NodePorts served on the node's addresses\s+FAIL \(.*not served: 192\.168\.1\.2 \(eth2\)/m,
    );
  });
}
