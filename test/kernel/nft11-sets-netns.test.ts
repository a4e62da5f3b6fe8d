import t from "tap";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { netnsAvailable, withNetns, type NetNs } from "../helpers/netns.js";
import { nft11 } from "../helpers/nft11-root.js";
import { finding, findingIds } from "../helpers/scan-report.js";
import { scanInNetns } from "../helpers/standin.js";
import { REPO_ROOT } from "../helpers/uml.js";

// kubernetes/kubernetes#136786 on real kernel state: kube-proxy's nftables table written by a host nft
// 1.1.3 (Debian trixie, scripts/nft11-root.sh) and read back by the system's nft 1.0.6, which plays the
// older nft kube-proxy's image carries (1.0.6 in distroless-iptables before #140405). What breaks,
// observed here: a named set or map declared with `type` (what kube-proxy declares: cluster-ips,
// service-ips, ...) and created by nft 1.1.2+ carries set user data (microsoft/azurelinux#17760) that
// nft 1.0.6 segfaults on in every listing that loads sets: `list table`, `list sets`, `-j -t list sets`,
// `list ruleset`. `typeof` declarations, chains and anonymous sets in rules do not crash it, so the
// table's chains stay listable and only the set reads fail.
//
// What a careful SRE expects from the agent, whose own nft is that 1.0.6 here: the crash is the read
// failing, named (the probe, the command, the signal), never "no kube-proxy table" or zero sets; the
// verdict stays unknown; and because the agent's nft crashed on this node's sets the way kube-proxy's
// image nft does in #136786, nft-host-newer-than-kube-proxy-supports is raised from that crash even
// though the host's nft package says 1.0.6 (a container's nft in the host netns wrote the sets, as in
// the reproducer). kube-proxy v1.37.0+ carries nft 1.0.6.1 (#140405): the read still failed,
// but the finding does not apply.

const KUBE_PROXY_TABLE = readFileSync(
  join(REPO_ROOT, "test/fixtures/netfilter/sources/kube-proxy-nft-v1.34-ip.nft"),
  "utf8",
);
// #136786's reproducer: a set in a table of its own, not kube-proxy's.
const REPRODUCER =
  'add table ip test_table\nadd set ip test_table test_set { type ifname ; elements = { "test" } ; }\n';

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
function systemNft(ns: NetNs, args: string[]) {
  const r = spawnSync("ip", ["netns", "exec", ns.name, "nft", ...args], {
    encoding: "utf8",
    timeout: 30_000,
  });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

const kubeProxy = (version: string) => ({
  mode: "nftables",
  version,
  lastSync: { agoSeconds: 3 },
  healthy: true,
});

const newer = nft11();
if (!netnsAvailable()) {
  t.fail("network namespaces are not available: this test needs root (CI runs as root)");
} else if (!newer.ok) {
  if (process.env.CI === "true") t.fail(newer.reason);
  // Off CI it may be absent (it is built by setup, not here); the reason is printed as the skip's.
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
      load(ns, newer.nft, REPRODUCER);
      // The state is whole: the nft that wrote it lists it.
      const own = ns.must([newer.nft, "list", "table", "ip", "kube-proxy"]);
      t.match(own, /set cluster-ips \{/);
      t.match(own, /map service-ips \{/);

      // (a) The older nft really crashes, on the user's listing and on the agent's own set read.
      for (const args of [
        ["list", "table", "ip", "kube-proxy"],
        ["-j", "-t", "list", "sets"],
        ["list", "set", "ip", "test_table", "test_set"],
      ]) {
        const r = systemNft(ns, args);
        t.equal(r.signal, "SIGSEGV", `nft ${args.join(" ")} is killed by SIGSEGV`);
        t.equal(r.stdout, "", "and prints nothing it could be mistaken for");
      }
      // Chains carry no set user data: 1.0.6 still lists them (so a scan must not take the chain
      // listing as the whole truth).
      const chains = systemNft(ns, ["-j", "list", "chains"]);
      t.equal(chains.status, 0);
      t.match(chains.stdout, /"table": "kube-proxy"/);

      // (b) The agent, its nft being 1.0.6, with kube-proxy v1.35.4 (the listing fix #137501, not the
      // image's nft): the read named as failed, the table never absent, the finding from the crash.
      const r = await scanInNetns(ns, kubeProxy("v1.35.4"));
      const failed = r.probes.find((p) => p.name === "nftables");
      t.equal(failed?.ok, false, "the nftables read is reported as failed");
      t.match(failed?.error, { kind: "exec-failed", message: /SIGSEGV/, command: "nft -j -t list sets" });
      t.equal(r.facts.nftables, null, "no nftables facts: unread, not empty");
      t.notOk(findingIds(r).includes("nftables-table-missing"), "the table is not called missing");
      t.equal(r.verdict, "unknown");
      t.ok(findingIds(r).includes("scan-incomplete"));
      const f = finding(r, "nft-host-newer-than-kube-proxy-supports");
      t.equal(f?.severity, "warning", "listing fix only: a canary, not a pass");
      t.match(f?.evidence.observed, /nft -j -t list sets.*SIGSEGV/);
      t.equal(f?.evidence.nftVersion, "1.0.6", "the host's package still says 1.0.6");

      // kube-proxy v1.37.0 reads these sets (nft 1.0.6.1 in its image): the finding goes, the failed
      // read stays.
      const fixed = await scanInNetns(ns, kubeProxy("v1.37.0"));
      t.notOk(findingIds(fixed).includes("nft-host-newer-than-kube-proxy-supports"));
      t.equal(fixed.probes.find((p) => p.name === "nftables")?.ok, false);
      t.equal(fixed.verdict, "unknown");
    }),
  );

  t.test("the reverse control: the same table written by the system's nft 1.0.6 reads cleanly", (t) =>
    withNetns(async (ns) => {
      ns.must(["ip", "link", "set", "lo", "up"]);
      load(ns, "nft", KUBE_PROXY_TABLE);
      load(ns, "nft", REPRODUCER);
      const listed = systemNft(ns, ["list", "table", "ip", "kube-proxy"]);
      t.equal(listed.status, 0, "1.0.6 lists its own sets");
      t.match(listed.stdout, /set cluster-ips \{/);
      // The newer nft reads the older one's sets too: the breakage is one way only.
      t.match(ns.must([newer.nft, "list", "set", "ip", "test_table", "test_set"]), /"test"/);
      const r = await scanInNetns(ns, kubeProxy("v1.35.4"));
      t.equal(r.probes.find((p) => p.name === "nftables")?.ok, true);
      t.same(
        r.facts.nftables?.kubeProxy.map((x) => `${x.family} ${x.name}`),
        ["ip kube-proxy"],
      );
      t.notOk(findingIds(r).includes("nft-host-newer-than-kube-proxy-supports"));
      t.notOk(findingIds(r).includes("scan-incomplete"));
    }),
  );
}
