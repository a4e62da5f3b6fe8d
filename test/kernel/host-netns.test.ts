import t from "tap";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

// Real kernel state in namespaces of our own; the probes run in a child process inside them.
const runner = fileURLToPath(new URL("./run-host-probe.ts", import.meta.url));
const NODE = [process.execPath, "--import=@tapjs/typescript/import", runner];
const ns = `ps-host-${process.pid}`;
const peer = `${ns}-p`;
const ip = (...args: string[]) => execFileSync("/usr/sbin/ip", args, { stdio: "pipe" });
const probe = (name: string, wrap: string[]) =>
  JSON.parse(execFileSync(wrap[0] ?? "", [...wrap.slice(1), ...NODE, name], { encoding: "utf8" })) as unknown;

t.before(() => {
  ip("netns", "add", ns);
  ip("netns", "add", peer);
  ip("link", "add", "eth9", "netns", ns, "type", "veth", "peer", "name", "eth9p", "netns", peer);
  ip("link", "add", "mgmt0", "netns", ns, "type", "veth", "peer", "name", "mgmt0p", "netns", peer);
  for (const [n, dev] of [
    [ns, "lo"],
    [ns, "eth9"],
    [ns, "mgmt0"],
    [peer, "eth9p"],
    [peer, "mgmt0p"],
  ] as const) {
    ip("-n", n, "link", "set", dev, "up");
  }
  ip("-n", ns, "addr", "add", "172.31.5.10/24", "dev", "eth9");
  ip("-n", ns, "addr", "add", "172.31.5.99/24", "dev", "eth9"); // a floating VIP
  ip("-n", ns, "addr", "add", "10.99.0.4/16", "dev", "mgmt0");
  ip("-n", ns, "addr", "add", "fd00:99::10/64", "dev", "eth9", "nodad");
  ip("-n", peer, "addr", "add", "172.31.5.1/24", "dev", "eth9p");
  ip("-n", peer, "addr", "add", "fd00:99::1/64", "dev", "eth9p", "nodad");
  ip("-n", ns, "route", "add", "default", "via", "172.31.5.1", "dev", "eth9");
  ip("-n", ns, "-6", "route", "add", "default", "via", "fd00:99::1", "dev", "eth9");
  execFileSync("/usr/sbin/ip", [
    "netns",
    "exec",
    ns,
    "/usr/sbin/sysctl",
    "-q",
    "-w",
    "net.ipv4.conf.all.arp_ignore=1",
  ]);
  execFileSync("/usr/sbin/ip", [
    "netns",
    "exec",
    ns,
    "/usr/sbin/sysctl",
    "-q",
    "-w",
    "net.ipv4.conf.all.arp_announce=2",
  ]);
});
t.teardown(() => {
  ip("netns", "del", ns);
  ip("netns", "del", peer);
});

t.test("sysctls in a namespace with strictARP set", async (t) => {
  const r = probe("sysctls", ["/usr/sbin/ip", "netns", "exec", ns]) as {
    ok: boolean;
    facts: { values: { name: string; value: string | null }[] };
  };
  t.ok(r.ok);
  const v = Object.fromEntries(r.facts.values.map((x) => [x.name, x.value]));
  t.equal(v["net.ipv4.conf.all.arp_ignore"], "1");
  t.equal(v["net.ipv4.conf.all.arp_announce"], "2");
  t.equal(v["net.ipv4.conf.all.route_localnet"], "0");
  // This host kernel has no IPVS: those files do not exist, and must read as null, not "0".
  t.equal(v["net.ipv4.vs.conntrack"], null);
  // nf_conntrack is built in here, so the conntrack sysctl exists in every namespace.
  t.equal(v["net.netfilter.nf_conntrack_tcp_be_liberal"], "0");
});

t.test("addresses: every local address, primary from the default route", async (t) => {
  const r = probe("addresses", ["/usr/sbin/ip", "netns", "exec", ns]) as {
    ok: boolean;
    facts: {
      interfaces: { name: string; kind: string | null; addresses: { address: string; scope: string }[] }[];
      primary: unknown;
    };
  };
  t.ok(r.ok);
  t.same(r.facts.primary, { ipv4: "172.31.5.10", ipv6: "fd00:99::10", source: "default-route" });
  const global = r.facts.interfaces.map((i) => [
    i.name,
    i.kind,
    i.addresses.filter((a) => a.scope === "global").map((a) => a.address),
  ]);
  t.same(global, [
    ["lo", null, []],
    ["eth9", "veth", ["172.31.5.10", "172.31.5.99", "fd00:99::10"]],
    ["mgmt0", "veth", ["10.99.0.4"]],
  ]);
});

t.test("nft-version execs nft when hostRoot is / and no package database is visible", async (t) => {
  const empty = mkdtempSync(join(tmpdir(), "proxyscope-nodpkg-"));
  t.teardown(() => rmSync(empty, { recursive: true, force: true }));
  const r = probe("nft-version", [
    "/usr/bin/unshare",
    "-m",
    "/bin/sh",
    "-c",
    `/bin/mount --bind ${empty} /var/lib/dpkg && exec "$@"`,
    "sh",
  ]);
  const expected = execFileSync("/usr/sbin/nft", ["--version"], { encoding: "utf8" }).trim();
  t.same(r, { ok: true, facts: { version: "1.0.6", source: "exec", detail: expected } });
});
