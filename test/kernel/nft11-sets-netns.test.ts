import t, { type Test } from "tap";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { DEFAULT_TOOL_DIRS } from "../../agent/io/tools.js";
import { netnsAvailable, withNetns, type NetNs } from "../helpers/netns.js";
import { nft11 } from "../helpers/nft11-root.js";
import { finding, findingIds } from "../helpers/scan-report.js";
import { scanInNetns } from "../helpers/standin.js";
import { REPO_ROOT } from "../helpers/uml.js";

// kubernetes/kubernetes#136786 on real kernel state: sets created by nft 1.1.3 (Debian trixie's, from the
// private root scripts/nft11-root.sh builds) read back by the system's nft 1.0.6, which plays the older nft
// kube-proxy's image carries until #140405 (nft 1.0.6.1, v1.37.0; danwinship on #136786, 2026-05-18: "the
// nft 1.0.4 in our kube-proxy image", so 1.0.6 stands for an nft of that age, not its exact version).
//
// What breaks, as observed here: a named set or map declared with `type` (what kube-proxy declares:
// cluster-ips, service-ips, ...; and the issue's reproducer `type ifname`) created by nft 1.1.2+ carries
// set user data (microsoft/azurelinux#17760) on which nft 1.0.6 segfaults whenever it loads that set:
// `list ruleset`, `list table` of its table, `list sets` of its family, and `nft -f -` transactions that
// touch sets, i.e. kube-proxy's sync (#136786 reopened: "If it's crashing on `nft -f -` for you, then that
// means the actual sync is failing"). Listing only another table works: that is all #137501 fixed. Chains,
// anonymous sets in rules and `typeof` declarations do not crash it.
//
// What a careful SRE expects from the agent, whose own nft is that 1.0.6 here: its set read dies the same
// way, and the report says so: the read named as failed (probe, command, signal), never "no kube-proxy
// table" nor zero sets; the verdict unknown; and nft-host-newer-than-kube-proxy-supports raised from that
// crash even though the host's nft package is 1.0.6 (a container's nft in the host netns wrote the sets,
// as in the issue's reproducer), at the severity kube-proxy's version earns. With kube-proxy v1.37.0+ the
// read still failed (the agent's nft is old), but the finding does not apply.
//
// The agent's image carries trixie's nft 1.1.3 as its own (it reads such sets) and bookworm's nft 1.0.6
// apart, as the witness of kube-proxy's image nft (/opt/nft-kube-proxy: ld.so, lib/, nft; run through the
// loader with that library path). Here the witness is the system's /usr/sbin/nft 1.0.6 laid out the same
// way, the agent's own nft the trixie root's: the read succeeds and the finding comes from the witness.

const KUBE_PROXY_TABLE = readFileSync(
  join(REPO_ROOT, "test/fixtures/netfilter/sources/kube-proxy-nft-v1.34-ip.nft"),
  "utf8",
);
// #136786's reproducer: a set in a table of its own, not kube-proxy's.
const REPRODUCER =
  'add table ip test_table\nadd set ip test_table test_set { type ifname ; elements = { "test" } ; }\n';
// One step of kube-proxy's sync (its transactions start with `add table` and write elements and rules).
const SYNC =
  "add table ip kube-proxy\nadd element ip kube-proxy cluster-ips { 10.96.0.10 }\n" +
  "flush chain ip kube-proxy services\n" +
  "add rule ip kube-proxy services ip daddr . meta l4proto . th dport vmap @service-ips\n";

/** Declarations first, as NetNs.loadNft and kube-proxy's own transactions do, with a chosen nft. */
function load(ns: NetNs, nft: string, text: string): void {
  const lines = text.split("\n");
  const decl = /^add (table|set|map|chain) /;
  ns.must(
    [nft, "-f", "-"],
    [...lines.filter((l) => decl.test(l)), ...lines.filter((l) => !decl.test(l))].join("\n"),
  );
}

/** The system's nft in the namespace, with the signal kept (NetNs.exec folds it into -1). */
function systemNft(ns: NetNs, args: string[], input?: string) {
  const r = spawnSync("ip", ["netns", "exec", ns.name, "nft", ...args], {
    input,
    encoding: "utf8",
    timeout: 30_000,
  });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

function crashes(t: Test, ns: NetNs, args: string[], input?: string): void {
  const r = systemNft(ns, args, input);
  t.equal(r.signal, "SIGSEGV", `nft ${args.join(" ")} is killed by SIGSEGV`);
  t.equal(r.stdout, "", "and prints nothing it could be mistaken for");
}

const kubeProxy = (version: string) => ({
  mode: "nftables",
  version,
  lastSync: { agoSeconds: 3 },
  healthy: true,
});

/** The agent's report with its nft (1.0.6) dying on the sets: named, never absent, and why. */
async function scanCrashed(t: Test, ns: NetNs, version: string, severity: string): Promise<void> {
  const r = await scanInNetns(ns, kubeProxy(version));
  const read = r.probes.find((p) => p.name === "nftables");
  t.equal(read?.ok, false, "the nftables read is reported as failed");
  t.match(read?.error, { kind: "exec-failed", message: /SIGSEGV/, command: "nft -j -t list sets" });
  t.equal(r.facts.nftables, null, "no nftables facts: unread, not empty");
  t.notOk(findingIds(r).includes("nftables-table-missing"), "the table is not called missing");
  // Never ready or clean over an unread table; a critical finding (syncs crash now) outranks unknown.
  t.equal(r.verdict, severity === "critical" ? "unhealthy" : "unknown");
  t.ok(findingIds(r).includes("scan-incomplete"));
  const f = finding(r, "nft-host-newer-than-kube-proxy-supports");
  t.equal(f?.severity, severity, `kube-proxy ${version}: ${severity}`);
  t.match(f?.evidence.observed, /nft -j -t list sets .*SIGSEGV/);
  t.equal(f?.evidence.nftVersion, "1.0.6", "the host's package still says 1.0.6");

  // kube-proxy v1.37.0 reads these sets (nft 1.0.6.1 in its image): the finding goes, the failed read stays.
  const fixed = await scanInNetns(ns, kubeProxy("v1.37.0"));
  t.notOk(findingIds(fixed).includes("nft-host-newer-than-kube-proxy-supports"));
  t.equal(fixed.probes.find((p) => p.name === "nftables")?.ok, false);
  t.equal(fixed.verdict, "unknown");
}

/** The system's nft 1.0.6 as the image lays out its witness: the loader, a library dir, the binary. */
function systemWitness(t: Test): string {
  const loader = ["/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"].find((l) => existsSync(l));
  if (loader === undefined) throw new Error("no dynamic loader known for this machine");
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-witness-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, "lib"));
  symlinkSync(loader, join(dir, "ld.so"));
  symlinkSync("/usr/sbin/nft", join(dir, "nft"));
  return dir;
}

/** The image's tools as the agent's own (the root's first, the system's for the rest), and a witness dir. */
function imageAgent(nft: string, witness: string): string[] {
  return [
    ...[dirname(nft), ...DEFAULT_TOOL_DIRS].flatMap((d) => ["--tool-dir", d]),
    "--kube-proxy-nft-dir",
    witness,
  ];
}

/**
 * The agent as its image runs it: its own nft 1.1.3 reads the sets; the witness (nft 1.0.6) dies on them,
 * and the finding is raised from that, at kube-proxy's version's severity; silent for v1.37.0+. Without
 * a witness the read is the same and nothing is raised from a crash nobody saw (the host's package is 1.0.6).
 */
async function scanWitnessed(
  t: Test,
  ns: NetNs,
  nft: string,
  version: string,
  severity: string,
): Promise<void> {
  const args = imageAgent(nft, systemWitness(t));
  const r = await scanInNetns(ns, kubeProxy(version), args);
  t.equal(r.probes.find((p) => p.name === "nftables")?.ok, true, "the agent's own nft reads the sets");
  t.match(
    r.facts.kubeProxyNft,
    { outcome: "crashed", signal: "SIGSEGV", version: "1.0.6" },
    "the witness crashed",
  );
  t.notOk(findingIds(r).includes("scan-incomplete"), "nothing unread");
  const f = finding(r, "nft-host-newer-than-kube-proxy-supports");
  t.equal(f?.severity, severity, `kube-proxy ${version}: ${severity}, from the witness`);
  t.match(
    f?.evidence.observed,
    /kube-proxy-nft -j -t list sets \(the witness of kube-proxy's image nft 1\.0\.6.*SIGSEGV/,
  );
  t.equal(f?.evidence.nftVersion, "1.0.6", "the host's package still says 1.0.6");

  const fixed = await scanInNetns(ns, kubeProxy("v1.37.0"), args);
  t.notOk(findingIds(fixed).includes("nft-host-newer-than-kube-proxy-supports"), "v1.37.0: exempt");
  t.equal(fixed.facts.kubeProxyNft?.outcome, "crashed");

  const none = await scanInNetns(ns, kubeProxy(version), imageAgent(nft, "/nonexistent/witness"));
  t.equal(none.facts.kubeProxyNft?.outcome, "not-present", "no witness: not asked");
  t.notOk(findingIds(none).includes("nft-host-newer-than-kube-proxy-supports"), "and no crash claimed");
}

const newer = nft11();
if (!netnsAvailable()) {
  t.fail("network namespaces are not available: this test needs root (CI runs as root)");
} else if (!newer.ok) {
  if (process.env.CI === "true") t.fail(newer.reason);
  // Off CI it may be absent (setup builds it, not the test); the reason is printed as the skip's.
  else t.test("sets written by nft 1.1, read by nft 1.0.6", { skip: newer.reason }, () => {});
} else {
  t.test(`the kube-proxy table written by nft ${newer.version}, read by the system's nft 1.0.6`, (t) =>
    withNetns(async (ns) => {
      ns.must(["ip", "link", "set", "lo", "up"]);
      t.match(
        systemNft(ns, ["--version"]).stdout,
        /^nftables v1\.0\.6 /,
        "the system's nft is the older one",
      );
      load(ns, newer.nft, KUBE_PROXY_TABLE);
      // The state is whole: the nft that wrote it lists it.
      const own = ns.must([newer.nft, "list", "table", "ip", "kube-proxy"]);
      t.match(own, /set cluster-ips \{/);
      t.match(own, /map service-ips \{/);

      // (a) The older nft really crashes: the user's listing, the agent's set read, kube-proxy's sync.
      crashes(t, ns, ["list", "table", "ip", "kube-proxy"]);
      crashes(t, ns, ["-j", "-t", "list", "sets"]);
      crashes(t, ns, ["-f", "-"], SYNC);
      // Chains carry no set user data: 1.0.6 still lists them, so the chain listing alone would look
      // like a whole table.
      const chains = systemNft(ns, ["-j", "list", "chains"]);
      t.equal(chains.status, 0);
      t.match(chains.stdout, /"table": "kube-proxy"/);

      // (b) kube-proxy v1.35.4 has the listing fix (#137501), not the image's nft: a warning.
      await scanCrashed(t, ns, "v1.35.4", "warning");
      // (c) The agent as its image runs it: its nft 1.1.3 reads, the witness 1.0.6 crashes.
      await scanWitnessed(t, ns, newer.nft, "v1.35.4", "warning");
    }),
  );

  t.test(
    `#136786's reproducer: kube-proxy's own table by nft 1.0.6, one set elsewhere by nft ${newer.version}`,
    (t) =>
      withNetns(async (ns) => {
        ns.must(["ip", "link", "set", "lo", "up"]);
        load(ns, "nft", KUBE_PROXY_TABLE);
        load(ns, newer.nft, REPRODUCER);
        // What #137501 made kube-proxy do, list its own table only, works; its sync still crashes.
        const own = systemNft(ns, ["-t", "list", "table", "ip", "kube-proxy"]);
        t.equal(own.status, 0, "kube-proxy's own table still lists");
        t.match(own.stdout, /set cluster-ips \{/);
        crashes(t, ns, ["-f", "-"], SYNC);
        crashes(t, ns, ["-j", "list", "sets", "ip"]);
        // kube-proxy v1.33.10 predates #137501, on a node already in nftables mode: critical.
        await scanCrashed(t, ns, "v1.33.10", "critical");
        await scanWitnessed(t, ns, newer.nft, "v1.33.10", "critical");
      }),
  );

  // The agent's image carries Debian trixie's tools (Dockerfile): its own nft is this 1.1.3, ahead of what
  // hosts write, so a set a newer nft wrote no longer takes the whole nftables read down. The agent is
  // pointed at the root's nft first (--tool-dir), the system's dirs after it for the other tools.
  t.test(
    `the image's nft ${newer.version} as the agent's own: kube-proxy's table is read beside sets nft ${newer.version} wrote`,
    (t) =>
      withNetns(async (ns) => {
        ns.must(["ip", "link", "set", "lo", "up"]);
        const imageTools = [dirname(newer.nft), ...DEFAULT_TOOL_DIRS].flatMap((d) => ["--tool-dir", d]);
        const nftRead = (r: Awaited<ReturnType<typeof scanInNetns>>) =>
          r.probes.find((p) => p.name === "nftables");
        load(ns, "nft", KUBE_PROXY_TABLE);
        // The reference: kube-proxy's table read by the system's nft 1.0.6 before any newer set exists.
        const reference = await scanInNetns(ns, kubeProxy("v1.35.4"));
        t.equal(nftRead(reference)?.ok, true, "1.0.6 reads the table alone");
        const want = reference.facts.nftables?.kubeProxy;
        t.match(want, [{ family: "ip", name: "kube-proxy" }]);
        t.ok((want?.[0]?.sets.length ?? 0) > 0, "with its sets");

        // #136786's reproducer beside it: the old image's nft (the system's) now fails the whole read ...
        load(ns, newer.nft, REPRODUCER);
        t.equal(nftRead(await scanInNetns(ns, kubeProxy("v1.35.4")))?.ok, false, "1.0.6: read failed");
        // ... the image's nft reads it, and its JSON gives the same table facts as 1.0.6's did.
        const mixed = await scanInNetns(ns, kubeProxy("v1.35.4"), imageTools);
        t.equal(nftRead(mixed)?.ok, true, `nft ${newer.version}: the nftables read succeeds`);
        t.same(mixed.facts.nftables?.kubeProxy, want, "kube-proxy's table: the same facts");
        t.same(
          mixed.facts.nftables?.tables.map((x) => `${x.family} ${x.name}`).sort(),
          ["ip kube-proxy", "ip test_table"],
          "and the foreign table is listed, not skipped",
        );
        t.notOk(findingIds(mixed).includes("scan-incomplete"), "nothing unread");
        // The same findings as before the foreign set (the ip6 table is absent in both: a warning).
        t.same(findingIds(mixed), findingIds(reference), "the same findings");
        t.equal(mixed.verdict, reference.verdict, "and the same verdict");

        // Every set written by nft 1.1.3, kube-proxy's too (a host whose nft wrote them all): the same.
        ns.must(["nft", "flush", "ruleset"]);
        load(ns, newer.nft, KUBE_PROXY_TABLE);
        const all = await scanInNetns(ns, kubeProxy("v1.35.4"), imageTools);
        t.equal(nftRead(all)?.ok, true, `nft ${newer.version} reads the sets it wrote`);
        t.same(all.facts.nftables?.kubeProxy, want, "kube-proxy's table: the same facts");
        t.same(findingIds(all), findingIds(reference), "the same findings");
      }),
  );

  t.test("the reverse control: the same sets written by the system's nft 1.0.6 read cleanly", (t) =>
    withNetns(async (ns) => {
      ns.must(["ip", "link", "set", "lo", "up"]);
      load(ns, "nft", KUBE_PROXY_TABLE);
      load(ns, "nft", REPRODUCER);
      const listed = systemNft(ns, ["list", "table", "ip", "kube-proxy"]);
      t.equal(listed.status, 0, "1.0.6 lists its own sets");
      t.match(listed.stdout, /set cluster-ips \{/);
      t.equal(systemNft(ns, ["-f", "-"], SYNC).status, 0, "and kube-proxy's sync goes through");
      // The newer nft reads the older one's sets too: the breakage is one way only.
      t.match(ns.must([newer.nft, "list", "set", "ip", "test_table", "test_set"]), /"test"/);
      const r = await scanInNetns(ns, kubeProxy("v1.35.4"), imageAgent(newer.nft, systemWitness(t)));
      t.equal(r.probes.find((p) => p.name === "nftables")?.ok, true);
      t.match(r.facts.kubeProxyNft, { outcome: "ok", version: "1.0.6" }, "the witness lists them too");
      t.same(
        r.facts.nftables?.kubeProxy.map((x) => `${x.family} ${x.name}`),
        ["ip kube-proxy"],
      );
      t.notOk(findingIds(r).includes("nft-host-newer-than-kube-proxy-supports"));
      t.notOk(findingIds(r).includes("scan-incomplete"));
    }),
  );
}
