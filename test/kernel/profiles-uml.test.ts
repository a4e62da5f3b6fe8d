import t from "tap";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  checkNode,
  checkQuiet,
  ipsetText,
  loadProfiles,
  nodesOn,
  umlNodeScript,
} from "../helpers/profiles.js";
import { firstDeletion } from "../helpers/remedies.js";
import {
  binariesFor,
  ipvsGuestScript,
  normalize,
  readIpvsDumps,
  recordingsOf,
  writeInputs,
} from "../profiles/record-kube-proxy.js";
import type { RecordingSpec } from "../profiles/profile.js";
import { recordedFiles, recordedPath } from "../profiles/recorded.js";
import { parseScanOutput } from "../helpers/scan-report.js";
import {
  bootUml,
  DEFAULT_MODULES,
  hostScratchDir,
  umlRunsHere,
  umlUnavailableReason,
} from "../helpers/uml.js";

// The profile corpus (test/profiles/corpus/*.ts), the nodes that need IPVS and real dummy links
// (kube-ipvs0, kube-dummy-if): ONE User-Mode Linux boot (kernel 6.1) for all of them, one network
// namespace per node, iptables-legacy (UML's kernel), the kube-proxy stand-in inside the namespace on
// kube-proxy's own default addresses, the built agent scanning from inside it.

// A loaded 2-core machine slows a guest several times over: room for that, a hung guest is still killed.
t.setTimeout(1_500_000);

const profiles = await loadProfiles();
const nodes = nodesOn(profiles, "uml");

// The ipvs-mode state those nodes load is the real binary's (test/profiles/record-kube-proxy.ts). In
// this same boot the binary runs again for ONE recording (a sync in the guest takes about a minute:
// all of them would add a quarter of an hour), with its switch to nftables mode when it has one, and
// the result is held to the files; the rest are only re-recorded by hand.
const ipvsRecordings = [...recordingsOf(profiles)].filter(([, s]) => s.mode === "ipvs");
const recheck = new Map<string, RecordingSpec>(
  ipvsRecordings.filter(([, s]) => s.then === "nftables").slice(0, 1),
);
let bins: Map<string, string> | null = null;
let binsMissing: string | null = null;
try {
  bins = binariesFor(recheck.values());
} catch (e) {
  binsMissing = (e as Error).message;
}
const fixed = { metricsAddress: "127.0.0.1:10249", healthAddress: "127.0.0.1:10256" };

const GUEST = `
set -eu
. test/helpers/uml/guest-lib.sh

# scan_with NODE FLAGS...: the stand-in in namespace NODE ($OUT/NODE-kube-proxy.json), then the scan.
scan_with() {
  ip netns exec "$1" node dist/test/standins/kube-proxy.js "$OUT/$1-kube-proxy.json" > "$OUT/$1-standin.out" 2>&1 &
  pid=$!
  # Ready by its own signal or its exit, never by a count of tries: a loaded host is slow.
  until grep -q '^ready' "$OUT/$1-standin.out"; do
    kill -0 $pid 2>/dev/null || { echo "stand-in for $1 exited before it got ready"; cat "$OUT/$1-standin.out"; exit 1; }
    sleep 0.2
  done
  scan_bare "$@"
  kill $pid; wait $pid 2>/dev/null || true
}

# scan_bare NODE FLAGS...: nothing answers on kube-proxy's ports.
scan_bare() {
  node=$1; shift
  # Unhurried deadlines: a guest on a loaded host missed the default 10 s reads.
  ip netns exec "$node" node dist/agent/cli.js scan --json --node "$node" \\
    --call-timeout-ms 60000 --probe-timeout-ms 120000 "$@" > "$OUT/$node.json" || true
}

${bins ? ipvsGuestScript(recheck, bins) : "echo no kube-proxy binaries"}
set -e

${nodes.map(({ node }) => umlNodeScript(node.name, node.state)).join("\n\n")}
echo guest done
`;

const reason = umlUnavailableReason();
if (binsMissing !== null) t.fail(`${binsMissing} (npm test builds them)`);
if (reason !== null) {
  t.fail(`User-Mode Linux is needed for the profile corpus and does not skip silently: ${reason}`);
} else if (umlRunsHere(t)) {
  const out = hostScratchDir("proxyscope-profiles-uml-");
  t.teardown(out.remove);
  writeInputs(out.path, recheck);
  for (const { node } of nodes) {
    writeFileSync(join(out.path, `${node.name}.ipset`), ipsetText(node.state));
    if (node.state.kubeProxy)
      writeFileSync(
        join(out.path, `${node.name}-kube-proxy.json`),
        JSON.stringify({ ...node.state.kubeProxy, ...fixed }),
      );
  }
  const boot = await bootUml({
    script: GUEST,
    env: { OUT: out.path },
    // vxlan for flannel.1 / vxlan.calico / cilium_vxlan; CONNMARK and state for aws-vpc-cni; CT (NOTRACK)
    // for NodeLocal DNSCache; NFLOG and limit for kube-router's pod firewall log-drop rule.
    modules: [
      ...DEFAULT_MODULES,
      "vxlan",
      "xt_connmark",
      "xt_state",
      "xt_CT",
      "xt_NFLOG",
      "nfnetlink_log",
      "xt_limit",
      // -m ipvs in a host firewall's rules
      "xt_ipvs",
    ],
    timeoutMs: 1_200_000,
    memMb: 768,
  });
  t.equal(boot.exitCode, 0, `guest script:\n${boot.output}`);
  t.same(boot.modulesFailed, [], "every module loaded");

  for (const [key, spec] of recheck)
    t.test(`the real kube-proxy ${spec.version} still makes the recorded ${key}`, async (t) => {
      t.notOk(boot.output.includes(`@@RECORD-FAILED ${key}@@`), "the binary synced in the guest");
      const now = readIpvsDumps(out.path, key, spec);
      for (const f of recordedFiles(spec))
        t.equal(now[f], normalize(f, readFileSync(recordedPath(spec, f), "utf8")), `${f} as recorded`);
    });

  const reports = new Map(
    nodes.map(({ node }) => [
      node.name,
      parseScanOutput(readFileSync(join(out.path, `${node.name}.json`), "utf8")),
    ]),
  );
  for (const { profile, node } of nodes) {
    // A node whose expectation waits for a rule not built yet still runs every assertion; tap reports it
    // as TODO (with what it waits for), never as passing, and it does not fail the run.
    t.test(
      `${profile.id} / ${node.name}: ${node.when}`,
      { todo: node.expect.waitsFor ?? false },
      async (t) => {
        checkNode(t, node, reports.get(node.name)!);
        await checkQuiet(t, node, reports.get(node.name)!);
      },
    );
  }
  // The deletion check must not pass only because nothing offered a deletion on a guessed phase.
  t.ok(
    [...reports.values()].some(
      (r) => r.phaseSource !== "proxyMode" && r.findings.some((f) => firstDeletion(f.remedy) >= 0),
    ),
    "a node whose kube-proxy did not answer was offered a (conditional) deletion, and it was checked",
  );
}
