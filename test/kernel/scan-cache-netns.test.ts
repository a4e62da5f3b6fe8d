import t from "tap";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { netnsAvailable, withNetns } from "../helpers/netns.js";
import { REPO_ROOT } from "../helpers/uml.js";

// Issue #14 on the host kernel: the nftables probe reuses its chain listing while kube-proxy's
// fingerprint is unchanged, and what it reuses never makes a report stale. kube-proxy's v1.34 table
// (its own proxier_test.go rules, test/fixtures/netfilter/sources), changed between scans with the
// real nft by test/kernel/scan-cache-driver.mjs.

const driver = fileURLToPath(new URL("test/kernel/scan-cache-driver.mjs", `file://${REPO_ROOT}/`));
const src = (f: string) => readFileSync(join(REPO_ROOT, "test/fixtures/netfilter/sources", f), "utf8");

// kube-proxy's hashAndTruncate prefix (pkg/proxy/nftables/proxier.go): base32(sha256(name))[:8].
function hash8(name: string): string {
  const abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = "";
  for (const b of createHash("sha256").update(name).digest()) bits += b.toString(2).padStart(8, "0");
  let out = "";
  for (let i = 0; i < 40; i += 5) out += abc[parseInt(bits.slice(i, i + 5), 2)];
  return out;
}

// A Service as kube-proxy 1.34 programs one (the fixture's svc1, another name and address).
function addService(): string {
  const svc = `service-${hash8("ns9/svc9/tcp/p80")}-ns9/svc9/tcp/p80`;
  const ep = `endpoint-${hash8("ns9/svc9/tcp/p80__10.180.0.9/80")}-ns9/svc9/tcp/p80__10.180.0.9/80`;
  return [
    `add chain ip kube-proxy ${svc}`,
    `add chain ip kube-proxy ${ep}`,
    `add rule ip kube-proxy ${svc} ip daddr 172.30.0.49 ip saddr != 10.0.0.0/8 jump mark-for-masquerade`,
    `add rule ip kube-proxy ${svc} numgen random mod 1 vmap { 0 : goto ${ep} }`,
    `add rule ip kube-proxy ${ep} ip saddr 10.180.0.9 jump mark-for-masquerade`,
    `add rule ip kube-proxy ${ep} meta l4proto tcp dnat to 10.180.0.9:80`,
    `add element ip kube-proxy cluster-ips { 172.30.0.49 }`,
    `add element ip kube-proxy service-ips { 172.30.0.49 . tcp . 80 : goto ${svc} }`,
    "",
  ].join("\n");
}

// A second port on svc1 (kube-proxy 1.34 gives it its own chain; only the map element matters here).
const addPort = () =>
  `add element ip kube-proxy service-ips { 172.30.0.41 . tcp . 8080 : goto service-${hash8("ns1/svc1/tcp/p80")}-ns1/svc1/tcp/p80 }\n`;

interface Scan {
  label: string;
  ok: boolean;
  chains: { total: number; service: number; endpoint: number } | null;
  serviceIps: number | null;
  iptablesNftRules: number | null;
  firewallChains: Record<string, number> | null;
  freshness: { source: string; reused: boolean; why: string }[];
}

t.test("hashAndTruncate as kube-proxy writes it (the fixture's own names)", async (t) => {
  t.equal(hash8("ns1/svc1/tcp/p80"), "ULMVA6XW");
  t.equal(hash8("ns1/svc1/tcp/p80__10.180.0.1/80"), "5OJB2KTY");
});

if (!netnsAvailable()) {
  t.fail("network namespaces are not available: this test needs root (CI runs as root)");
} else {
  t.test("a cached chain listing: reused while nothing changed, never stale past what it can see", (t) =>
    withNetns(async (ns) => {
      ns.loadNft(src("kube-proxy-nft-v1.34-ip.nft"));
      const dir = mkdtempSync(join(tmpdir(), "proxyscope-scan-cache-"));
      t.teardown(() => rmSync(dir, { recursive: true, force: true }));
      writeFileSync(join(dir, "add-service.nft"), addService());
      // A chain someone else put in kube-proxy's table: nothing kube-proxy counts sees it.
      writeFileSync(join(dir, "foreign-chain.nft"), "add chain ip kube-proxy someone-elses-chain\n");
      writeFileSync(join(dir, "add-port.nft"), addPort());
      // An element someone else put in kube-proxy's map: no counter of kube-proxy's moves either.
      writeFileSync(
        join(dir, "foreign-element.nft"),
        "add element ip kube-proxy service-ips { 172.30.9.9 . udp . 53 : drop }\n",
      );
      const r = ns.runNode(driver, [dir, join(dir, "scans.json")]);
      t.equal(r.code, 0, r.stderr);
      const scans = JSON.parse(readFileSync(join(dir, "scans.json"), "utf8")) as Scan[];
      const by = new Map(scans.map((s) => [s.label, s]));
      const of = (label: string) => {
        const s = by.get(label)!;
        t.ok(s.ok, `${label}: the probe read the table`);
        return {
          ...s,
          chain: s.freshness.find((f) => f.source === "nft-chains")!,
          ips: s.freshness.find((f) => f.source === "nft-service-ips")!,
        };
      };

      const first = of("first");
      t.equal(first.chain.reused, false, "the first scan lists the chains");
      t.match(first.chain.why, /first read/);
      t.equal(first.ips.reused, false, "and service-ips");
      const base = first.chains!;
      t.ok(first.serviceIps! > 0, "service-ips elements counted");

      const same = of("unchanged");
      t.equal(same.chain.reused, true, "nothing changed: the listing is reused");
      t.same(same.chains, base);
      t.equal(same.ips.reused, true, "and service-ips");
      t.equal(same.serviceIps, first.serviceIps);

      const added = of("service added");
      t.equal(added.chain.reused, false, "kube-proxy's counters moved: the chains are read again");
      t.match(added.chain.why, /fingerprint changed/);
      t.equal(added.chains!.service, base.service + 1, "the new Service's chain is in the report");
      t.equal(added.chains!.endpoint, base.endpoint + 1, "and its endpoint's");
      t.equal(added.ips.reused, false, "service-ips is read again under the new fingerprint");
      t.equal(added.serviceIps, first.serviceIps! + 1, "with the new Service's element");

      const settled = of("after the service, no sync since its read");
      t.equal(settled.chain.reused, true, "no kube-proxy sync since that read: reused");
      t.same(settled.chains, added.chains);

      const port = of("port added, counters bumped");
      t.equal(port.ips.reused, false, "only kube-proxy's counters moved: service-ips is read again");
      t.match(port.ips.why, /fingerprint changed/);
      t.equal(port.serviceIps, added.serviceIps! + 1, "and holds the new port's element");

      const other = of("another program's iptables-nft rule");
      t.equal(other.ips.reused, true, "kube-proxy's state unchanged: service-ips reused");
      t.equal(
        other.iptablesNftRules,
        port.iptablesNftRules! + 2,
        "the other program's rules are seen at once",
      );
      t.same(other.firewallChains, { "ufw-before-input": 1 }, "and its chain");

      const blind = of("foreign chain, fingerprint blind");
      t.equal(blind.chain.reused, true, "a change no counter sees is not seen at once (by design)");
      t.equal(blind.chains!.total, added.chains!.total);
      t.equal(blind.ips.reused, true, "so is someone else's element in service-ips");
      t.equal(blind.serviceIps, port.serviceIps);

      const full = of("full-read interval passed");
      t.equal(full.chain.reused, false, "the bounded full read comes");
      t.match(full.chain.why, /full-read interval/);
      t.equal(full.chains!.total, added.chains!.total + 1, "and sees the chain the fingerprint missed");
      t.equal(full.ips.reused, false);
      t.equal(full.serviceIps, port.serviceIps! + 1, "and the element");

      const unread = of("metrics unread");
      t.equal(unread.chain.reused, false, "kube-proxy's /metrics unread: never counted as unchanged");
      t.match(unread.chain.why, /fingerprint unknown: kube-proxy's \/metrics was not read/);
      t.equal(unread.ips.reused, false, "nor service-ips");
      t.match(unread.ips.why, /fingerprint unknown/);
    }),
  );
}
