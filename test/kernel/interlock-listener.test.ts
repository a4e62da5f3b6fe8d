// The cleanup interlock on REAL sockets: which listener answered, and whether kube-proxy said the
// same everywhere. Before, the interlock took every LISTEN socket on the metrics port, whatever its
// address, and accepted the first process holding any of them: with kube-proxy's metrics on the node
// address (in ipvs mode) and anything else answering "nftables" on 127.0.0.1:10249, `cleanup --apply`
// ran. Each test starts kube-proxy STAND-INs (a copy of node named kube-proxy, as root) and others in
// a fresh network namespace (test/helpers/interlock-netns.ts) and runs the real agent CLI. The
// listener the test wants accepted wrongly is started first, so it has the lower pid: the one the old
// interlock found first in /proc.
import t from "tap";
import { cleanupAgainstListeners, type InterlockListener } from "../helpers/interlock-netns.js";
import { netnsAvailable } from "../helpers/netns.js";
import { agentBuilt } from "../e2e/agent-process.js";

t.setTimeout(1_800_000);
const skip =
  (!agentBuilt() && "run npm run build first") ||
  (process.getuid?.() !== 0 && "needs root") ||
  (!netnsAvailable() && "cannot create network namespaces");

const NODE_IP = "10.77.0.2";
// A second local address, where a metricsBindAddress of "<node IP>:10249" binds. On lo: this host's
// kernel has no dummy link type, and to the socket layer a local address is a local address.
const nodeAddress = [["ip", "addr", "add", `${NODE_IP}/32`, "dev", "lo"]];
const loopbackUrls = { metricsUrl: "http://127.0.0.1:10249", healthUrl: "http://127.0.0.1:10256" };

const standin = (
  mode: "ipvs" | "nftables",
  metrics: string,
  health: string,
  extra: object = {},
): InterlockListener["scenario"] => ({
  mode,
  version: "v1.33.1",
  metricsAddress: metrics,
  healthAddress: health,
  ...extra,
});

t.test(
  "kube-proxy on the node address in ipvs mode, another process answering nftables on 127.0.0.1: refused",
  { skip },
  async (t) => {
    const r = await cleanupAgainstListeners(
      [
        {
          binary: "kube-proxy",
          user: "root",
          scenario: standin("ipvs", `${NODE_IP}:10249`, `${NODE_IP}:10256`),
        },
        {
          binary: "node",
          user: "nobody",
          scenario: standin("nftables", "127.0.0.1:10249", "127.0.0.1:10256"),
        },
      ],
      { ...loopbackUrls, setup: nodeAddress },
    );
    t.equal(r.code, 4, "exit 4", { out: r.out });
    t.match(r.out, /REFUSED/);
    t.match(
      r.out,
      new RegExp(
        `the process listening on 127\\.0\\.0\\.1:10249 is not kube-proxy: pid ${r.pids[1]} \\(executable "[^"]*node"`,
      ),
      "names the process that answered, not kube-proxy on the node address",
    );
    t.notMatch(r.out, /applied/);
  },
);

t.test(
  "two sockets on the very address:port (SO_REUSEPORT), one of them not kube-proxy's: refused",
  { skip },
  async (t) => {
    const r = await cleanupAgainstListeners(
      [
        {
          binary: "kube-proxy",
          user: "root",
          scenario: standin("nftables", "127.0.0.1:10249", "127.0.0.1:10256", { reusePort: true }),
        },
        {
          binary: "node",
          user: "root",
          scenario: standin("nftables", "127.0.0.1:10249", "127.0.0.1:10256", { reusePort: true }),
        },
      ],
      loopbackUrls,
    );
    t.equal(r.code, 4, "exit 4", { out: r.out });
    t.match(
      r.out,
      new RegExp(
        `the process listening on 127\\.0\\.0\\.1:10249 is not kube-proxy: pid ${r.pids[1]} \\(executable "[^"]*node"`,
      ),
    );
  },
);

t.test(
  "kube-proxy answering nftables on 127.0.0.1 but ipvs on the node address: refused",
  { skip },
  async (t) => {
    const r = await cleanupAgainstListeners(
      [
        {
          binary: "kube-proxy",
          user: "root",
          scenario: standin("nftables", "127.0.0.1:10249", "127.0.0.1:10256"),
        },
        {
          binary: "kube-proxy",
          user: "root",
          scenario: standin("ipvs", `${NODE_IP}:10249`, `${NODE_IP}:10256`),
        },
      ],
      { ...loopbackUrls, setup: nodeAddress },
    );
    t.equal(r.code, 4, "exit 4", { out: r.out });
    t.match(
      r.out,
      new RegExp(
        `kube-proxy \\(pid ${r.pids[1]}\\) answers "ipvs" on http://10\\.77\\.0\\.2:10249/proxyMode`,
      ),
    );
  },
);

t.test(
  "kube-proxy on the wildcard address answering nftables (its health port answers 404): accepted",
  { skip },
  async (t) => {
    const r = await cleanupAgainstListeners(
      [
        {
          binary: "kube-proxy",
          user: "root",
          scenario: standin("nftables", "0.0.0.0:10249", "0.0.0.0:10256"),
        },
      ],
      loopbackUrls,
    );
    t.equal(r.code, 0, "exit 0", { out: r.out });
    t.match(r.out, /: applied/);
  },
);

// The same port through the other family: an IPv6 socket bound to 127.0.0.1's IPv4-mapped address,
// and the IPv6 wildcard (dual-stack, so it takes IPv4 connections), beside kube-proxy on 127.0.0.1.
// Both share the port with SO_REUSEPORT (same user: the kernel allows nothing else).
for (const [name, address, shown] of [
  ["the IPv4-mapped address", "[::ffff:127.0.0.1]", "\\[::ffff:127\\.0\\.0\\.1\\]:10249"],
  ["the IPv6 wildcard", "[::]", "\\[::\\]:10249 \\(a wildcard"],
] as const)
  t.test(
    `kube-proxy on 127.0.0.1 and another process on ${name}, same port: refused`,
    { skip },
    async (t) => {
      const r = await cleanupAgainstListeners(
        [
          {
            binary: "kube-proxy",
            user: "root",
            scenario: standin("nftables", "127.0.0.1:10249", "127.0.0.1:10256", { reusePort: true }),
          },
          {
            binary: "node",
            user: "root",
            scenario: standin("nftables", `${address}:10249`, `${address}:10256`, { reusePort: true }),
          },
        ],
        loopbackUrls,
      );
      t.equal(r.code, 4, "exit 4", { out: r.out });
      t.match(
        r.out,
        new RegExp(
          `the process listening on ${shown}[^\\n]* is not kube-proxy: pid ${r.pids[1]} \\(executable "[^"]*node"`,
        ),
      );
    },
  );
