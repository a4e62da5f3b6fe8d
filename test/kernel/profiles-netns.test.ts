import t from "tap";
import { netnsAvailable, withNetns, type NetNs } from "../helpers/netns.js";
import {
  buildInNetns,
  checkNode,
  checkQuiet,
  loadProfiles,
  nodesOn,
  scanFlags,
} from "../helpers/profiles.js";
import { parseScanOutput } from "../helpers/scan-report.js";
import { AGENT_CLI, scanInNetns } from "../helpers/standin.js";
import type { NodeState } from "../profiles/profile.js";

// The profile corpus (test/profiles/corpus/*.ts), the nodes that live on the host kernel: each built in
// its own network namespace from its distribution's and plugins' rulesets (nftables, iptables-nft,
// ipset, links), kube-proxy's endpoints answered by the stand-in in that distribution's version and
// format (or nothing listening), scanned by the built agent. The IPVS nodes are in profiles-uml.test.ts.

const nodes = nodesOn(await loadProfiles(), "netns");

if (!netnsAvailable()) {
  t.fail("network namespaces are not available: the profile corpus needs root (CI runs as root)");
} else {
  for (const { profile, node } of nodes) {
    // As in profiles-uml: a node waiting for a rule not built yet runs, and is reported as TODO.
    t.test(`${profile.id} / ${node.name}: ${node.when}`, { todo: node.expect.waitsFor ?? false }, (t) =>
      withNetns(async (ns) => {
        buildInNetns(ns, node.state);
        const report = await scan(ns, node.name, node.state);
        checkNode(t, node, report);
        await checkQuiet(t, node, report);
      }),
    );
  }
}

async function scan(ns: NetNs, name: string, s: NodeState) {
  if (s.kubeProxy !== null) return scanInNetns(ns, s.kubeProxy, scanFlags(s), name);
  const out = ns.runNode(AGENT_CLI, ["scan", "--json", "--node", name, ...scanFlags(s)]);
  if (out.code !== 0) throw new Error(`scan exited ${out.code}: ${out.stderr}`);
  return parseScanOutput(out.stdout);
}
