import t from "tap";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { netnsAvailable, withNetns } from "../helpers/netns.js";
import { REPO_ROOT } from "../helpers/uml.js";

// Reuse between scans, on the host kernel: the nftables and iptables-nft reads are reused while the nf_tables
// generation stands still (read by the agent's own proxyscope-nft-generation), and what is reused
// never makes a report stale: every change between two scans, by kube-proxy or anyone else, is seen at
// once. kube-proxy's v1.34 table (its own proxier_test.go rules, test/fixtures/netfilter/sources),
// changed between scans with the real nft and iptables-nft by test/kernel/scan-cache-driver.mjs.

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

interface Scan {
  label: string;
  ok: boolean;
  generation: number | null;
  chains: { total: number; service: number; endpoint: number } | null;
  serviceIps: number | null;
  iptablesNftRules: number | null;
  firewallChains: Record<string, number> | null;
  setAnswers: number;
  parityEndpoints: number | null;
  freshness: { source: string; reused: boolean; why: string; readAt: string }[];
}

t.test("hashAndTruncate as kube-proxy writes it (the fixture's own names)", async (t) => {
  t.equal(hash8("ns1/svc1/tcp/p80"), "ULMVA6XW");
  t.equal(hash8("ns1/svc1/tcp/p80__10.180.0.1/80"), "5OJB2KTY");
});

if (!netnsAvailable()) {
  t.fail("network namespaces are not available: this test needs root (CI runs as root)");
} else {
  t.test("nf_tables reads: reused while the generation stands still, never stale past a change", (t) =>
    withNetns(async (ns) => {
      ns.loadNft(src("kube-proxy-nft-v1.34-ip.nft"));
      const dir = mkdtempSync(join(tmpdir(), "proxyscope-scan-cache-"));
      t.teardown(() => rmSync(dir, { recursive: true, force: true }));
      writeFileSync(join(dir, "add-service.nft"), addService());
      writeFileSync(join(dir, "foreign-chain.nft"), "add chain ip kube-proxy someone-elses-chain\n");
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
        const src = (name: string) => s.freshness.find((f) => f.source === name)!;
        return { ...s, nft: src("nftables"), ipt: src("iptables-nft"), ip6t: src("ip6tables-nft") };
      };
      const reused = (s: ReturnType<typeof of>, label: string) => {
        t.equal(s.nft.reused, true, `${label}: nftables reused`);
        t.equal(s.ipt.reused, true, `${label}: iptables-nft reused`);
        t.equal(s.ip6t.reused, true, `${label}: ip6tables-nft reused`);
      };
      const read = (s: ReturnType<typeof of>, label: string, why: RegExp) => {
        t.equal(s.nft.reused, false, `${label}: nftables read`);
        t.match(s.nft.why, why);
        t.equal(s.ipt.reused, false, `${label}: iptables-nft read`);
        t.match(s.ipt.why, why);
        t.equal(s.ip6t.reused, false, `${label}: ip6tables-nft read`);
      };

      const first = of("first");
      read(first, "first scan", /first read/);
      t.type(first.generation, "number", "the real generation id was read");
      const base = first.chains!;
      t.ok(first.serviceIps! > 0, "service-ips elements counted");
      t.ok(first.setAnswers > 0 && first.parityEndpoints! > 0, "parity's listings are shared");

      const same = of("unchanged");
      reused(same, "nothing changed");
      t.equal(same.nft.readAt, first.nft.readAt, "the reused read says when it was taken");
      t.same(same.chains, base);
      t.equal(same.serviceIps, first.serviceIps);
      t.equal(same.iptablesNftRules, first.iptablesNftRules);
      t.equal(same.setAnswers, first.setAnswers, "and parity still gets nft's answers");
      t.equal(same.parityEndpoints, first.parityEndpoints, "and the endpoints of the chain listing");

      const readers = of("after other readers");
      t.equal(readers.generation, first.generation, "a listing by nft or iptables-nft-save moves nothing");
      reused(readers, "after reads");

      const added = of("service added");
      read(added, "kube-proxy's transaction", /nf_tables changed since the last read/);
      t.equal(added.chains!.service, base.service + 1, "the new Service's chain is in the report");
      t.equal(added.chains!.endpoint, base.endpoint + 1, "and its endpoint's");
      t.equal(added.serviceIps, first.serviceIps! + 1, "with its service-ips element");
      t.equal(added.parityEndpoints, first.parityEndpoints! + 1, "and parity sees its endpoint");
      reused(of("unchanged after the service"), "no change since");

      const other = of("another program's iptables-nft rule");
      read(other, "another program's rule", /nf_tables changed/);
      t.equal(
        other.iptablesNftRules,
        added.iptablesNftRules! + 2,
        "the other program's rules are seen at once",
      );
      t.same(other.firewallChains, { "ufw-before-input": 1 }, "and its chain");

      const foreign = of("foreign chain and element");
      read(foreign, "a change no kube-proxy counter sees", /nf_tables changed/);
      t.equal(foreign.chains!.total, added.chains!.total + 1, "someone else's chain is seen at once");
      t.equal(foreign.serviceIps, added.serviceIps! + 1, "and their element");

      const during = of("changed during the read");
      t.equal(during.nft.reused, false, "read again: the generation moved before it");
      t.equal(during.chains!.total, foreign.chains!.total + 1, "what it read: the chain added before it");
      t.match(during.nft.why, /not kept: nf_tables changed while it was read/);
      const after = of("after a read across a change");
      t.equal(after.nft.reused, false, "a read across a change is never reused");
      t.match(after.nft.why, /first read/);
      t.equal(after.chains!.total, foreign.chains!.total + 2, "and the chain added meanwhile is seen");

      const full = of("full-read interval passed");
      read(full, "the bounded full read", /full-read interval/);

      const unknown = of("generation unknown");
      read(unknown, "no generation", /nf_tables generation unknown: missing-tool/);
      t.same(
        unknown.chains,
        full.chains,
        "an unknown generation reads everything, never counts as unchanged",
      );

      // Parity off (the default): the same facts, and nothing kept for parity, read or reused.
      const off = of("parity off");
      read(off, "parity off, its own cache", /first read/);
      t.same(off.chains, unknown.chains, "parity off: the same counts");
      t.equal(off.setAnswers, 0, "parity off: no nft answer kept");
      t.equal(off.parityEndpoints, null, "parity off: no chain listing kept");
      const offAgain = of("parity off, unchanged");
      reused(offAgain, "parity off, nothing changed");
      t.same(offAgain.chains, off.chains);
      t.equal(offAgain.setAnswers, 0);
      t.equal(offAgain.parityEndpoints, null);
    }),
  );
}
