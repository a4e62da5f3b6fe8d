import t from "tap";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_TOOL_DIRS } from "../../agent/io/tools.js";
import { netnsAvailable, withNetns } from "../helpers/netns.js";
import { trixieTools } from "../helpers/trixie-tools.js";
import { findingIds } from "../helpers/scan-report.js";
import { scanInNetns } from "../helpers/standin.js";
import { REPO_ROOT } from "../helpers/uml.js";

// The agent's image carries Debian trixie's tools (Dockerfile: nft 1.1.3, iptables 1.8.11, ipset 7.22,
// iproute2 6.15). The probes' parsers were written against what bookworm's tools print (the recorded
// fixtures: nft 1.0.6, iptables 1.8.9, ipset 7.17, iproute2 6.1). Here both sets of real tools read the
// same kernel state in one network namespace, and the agent must make the same report of it: the same
// facts from every probe and the same findings. trixie's tools come from the private root
// scripts/nft11-root.sh builds (run through trixie's own loader, --tool-dir first); ipvsadm is left to the
// system's (IPVS is not in this host kernel: the ipvs probes run in UML).

const source = (name: string) =>
  readFileSync(join(REPO_ROOT, "test/fixtures/netfilter/sources", name), "utf8");
const kubeProxy = { mode: "nftables", version: "v1.35.4", lastSync: { agoSeconds: 3 }, healthy: true };

const tools = trixieTools();
if (!netnsAvailable()) {
  t.fail("network namespaces are not available: this test needs root (CI runs as root)");
} else if (!tools.ok) {
  if (process.env.CI === "true") t.fail(tools.reason);
  else t.test("trixie's tools read what bookworm's read", { skip: tools.reason }, () => {});
} else {
  t.test(`trixie's tools (${tools.versions.join(", ")}) give the same report as the system's`, (t) =>
    withNetns(async (ns) => {
      ns.must(["ip", "link", "set", "lo", "up"]);
      // nftables mode with ipvs-mode leftovers (iptables-nft chains and ipsets), kubelet's chains, and
      // old ipvs-mode chains on the legacy backend: every iptables backend and family the probes read.
      ns.iptablesRestore(source("kubelet.rules"), "nft", "ipv4");
      ns.iptablesRestore(source("kubelet6.rules"), "nft", "ipv6");
      ns.loadNft(source("kube-proxy-nft-v1.34-ip.nft"));
      ns.ipsetRestore(source("ipvs-mode.ipset"));
      ns.iptablesRestore(source("kube-proxy-ipvs-mode.rules"), "nft", "ipv4");
      ns.iptablesRestore(source("kube-proxy-ipvs-mode-pre130.rules"), "legacy", "ipv4");

      const system = await scanInNetns(ns, kubeProxy);
      const trixie = await scanInNetns(
        ns,
        kubeProxy,
        [tools.dir, ...DEFAULT_TOOL_DIRS].flatMap((d) => ["--tool-dir", d]),
      );
      const failed = (r: typeof system) => r.probes.filter((p) => !p.ok).map((p) => p.name);
      t.same(failed(trixie), failed(system), "the same probes fail (none the other reads)");
      // Not read by the tools: kube-proxy's answers (the stand-in's clock) and the listening sockets (the
      // stand-in's ports and pid differ between the two scans).
      const notByTools = new Set(["kubeProxyHealth", "kubeProxyMetrics", "listeners"]);
      const compared = Object.keys(system.facts).filter((k) => !notByTools.has(k));
      t.ok(compared.includes("nftables") && compared.includes("iptables"), compared.join(" "));
      for (const name of compared.sort()) {
        t.same(
          (trixie.facts as Record<string, unknown>)[name],
          (system.facts as Record<string, unknown>)[name],
          `${name}: the same facts`,
        );
      }
      t.ok(system.facts.nftables?.kubeProxy.length, "kube-proxy's table was read");
      t.same(findingIds(trixie), findingIds(system), "the same findings");
      t.equal(trixie.verdict, system.verdict, "and the same verdict");
    }),
  );
}
