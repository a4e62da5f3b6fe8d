import t from "tap";
import { readFileSync } from "node:fs";
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
import { binariesFor, normalize, recordInNetns, recordingsOf } from "../profiles/record-kube-proxy.js";
import { RECORDED_FILES, recordedPath } from "../profiles/recorded.js";

// The profile corpus (test/profiles/corpus/*.ts), the nodes that live on the host kernel: each built in
// its own network namespace from its distribution's and plugins' rulesets (nftables, iptables-nft,
// ipset, links), kube-proxy's endpoints answered by the stand-in in that distribution's version and
// format (or nothing listening), scanned by the built agent. The IPVS nodes are in profiles-uml.test.ts.

const profiles = await loadProfiles();
const nodes = nodesOn(profiles, "netns");

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

// The nftables tables and iptables-mode chains those nodes load are the real binary's
// (test/profiles/record-kube-proxy.ts): run it again the same way and hold the recording to what it
// makes now. A new release, a changed profile input or a recorder that reads less fails here, and
// `record-kube-proxy.ts nftables` (or `iptables`) records again.
const nftRecordings = [...recordingsOf(profiles)].filter(([, s]) => s.mode !== "ipvs");
if (netnsAvailable()) {
  let bins: Map<string, string> | null = null;
  try {
    bins = binariesFor(nftRecordings.map(([, s]) => s));
  } catch (e) {
    t.fail(`${(e as Error).message} (npm test builds them)`);
  }
  for (const [key, spec] of bins ? nftRecordings : [])
    t.test(`the real kube-proxy ${spec.version} still makes the recorded ${key}`, async (t) => {
      const now = await recordInNetns(spec, bins!.get(spec.version)!);
      for (const f of RECORDED_FILES[spec.mode])
        t.equal(now[f], normalize(f, readFileSync(recordedPath(spec, f), "utf8")), `${f} as recorded`);
    });
}

async function scan(ns: NetNs, name: string, s: NodeState) {
  if (s.kubeProxy !== null) return scanInNetns(ns, s.kubeProxy, scanFlags(s), name);
  const out = ns.runNode(AGENT_CLI, ["scan", "--json", "--node", name, ...scanFlags(s)]);
  if (out.code !== 0) throw new Error(`scan exited ${out.code}: ${out.stderr}`);
  return parseScanOutput(out.stdout);
}
