import t from "tap";
import { existsSync, readdirSync } from "node:fs";
import { FINDING_IDS } from "../../../agent/rules/catalogue.js";
import { fixturePath, loadProfiles } from "../../helpers/profiles.js";
import { isRecorded, RECORDINGS, recordingsOf } from "../../profiles/recorded.js";

// The profile corpus is data; this checks the data itself (cheaply, no kernel): it covers what real clusters
// asks for, every node is buildable where it says, every ruleset it loads exists, and every expected id
// is one the agent has — unless the profile says which fix it waits for.

const profiles = await loadProfiles();
const nodes = profiles.flatMap((p) => p.nodes.map((n) => ({ p, n })));

t.test("covers the distributions and network plugins users run", async (t) => {
  const dists = profiles.map((p) => p.distribution).join(" | ");
  for (const d of [
    /kubeadm/,
    /EKS/,
    /Amazon Linux 2023/,
    /Bottlerocket/,
    /AKS/,
    /GKE/,
    /kOps/,
    /k3s/,
    /RKE2/,
    /Talos/,
    /OpenShift/,
  ])
    t.match(dists, d, `a profile for ${d.source}`);
  const plugins = profiles.flatMap((p) => p.plugins).join(" | ");
  for (const d of [
    /VPC CNI/,
    /Azure CNI/,
    /Calico \(iptables/,
    /Calico eBPF/,
    /Cilium with kube-proxy replacement/,
    /Cilium without kube-proxy replacement/,
    /Flannel/,
    /kube-router/,
    /Docker/,
  ])
    t.match(plugins, d, `a profile with ${d.source}`);
  t.ok(
    nodes.some(
      ({ n }) => n.state.kubeProxy === null && n.state.kernel === "uml" && (n.state.ipvs ?? []).length === 0,
    ),
    "a node kube-proxy left for good, with its state behind (where a deletion must wait for confirmation)",
  );
});

t.test("every profile cites its sources and every node is well formed", async (t) => {
  const names = new Set<string>();
  for (const { p, n } of nodes) {
    t.ok(p.sources.length > 0, `${p.id} cites its sources`);
    t.match(n.name, /^[a-z0-9-]{1,20}$/, `${n.name}: a namespace name`);
    t.notOk(names.has(n.name), `${n.name} is unique`);
    names.add(n.name);
    const s = n.state;
    for (const f of [...(s.ipsets ?? []), ...(s.iptables ?? []), ...(s.ip6tables ?? []), ...(s.nft ?? [])])
      t.ok(
        existsSync(fixturePath(f)),
        `${n.name}: ${f} exists (test/fixtures/netfilter/sources or a recording)`,
      );
    if (s.kernel === "netns") {
      t.same(s.ipvs ?? [], [], `${n.name}: the host kernel has no IPVS`);
      t.notOk(
        (s.links ?? []).some((l) => /^kube-(ipvs0|dummy-if)$/.test(l.name)),
        `${n.name}: kube-ipvs0 / kube-dummy-if need a real dummy link (UML)`,
      );
    } else t.same(s.nft ?? [], [], `${n.name}: UML's nftables has no ip family`);
    t.same(n.expect.findings, [...n.expect.findings].sort(), `${n.name}: findings listed sorted`);
    const unknown = n.expect.findings.filter((id) => !(FINDING_IDS as readonly string[]).includes(id));
    if (unknown.length > 0)
      t.ok(n.expect.waitsFor, `${n.name}: ${unknown.join(", ")} is no id yet, so it says what it waits for`);
    t.ok(n.why.length > 0 && n.when.length > 0, `${n.name} says when and why`);
  }
});

t.test(
  "kube-proxy's own state is the real binary's: every recording a node loads is there, none unused",
  async (t) => {
    const wanted = recordingsOf(profiles);
    t.ok(wanted.size > 0, "the corpus loads recordings");
    for (const [key, spec] of wanted)
      t.ok(
        isRecorded(spec),
        `${key} is recorded (node --import @tapjs/typescript/import test/profiles/record-kube-proxy.ts)`,
      );
    const onDisk = existsSync(RECORDINGS)
      ? readdirSync(RECORDINGS, { withFileTypes: true })
          .filter((d) => d.isDirectory())
          .map((d) => d.name)
      : [];
    t.same(
      onDisk.filter((d) => !wanted.has(d)),
      [],
      "no recording that no profile loads",
    );
    // Nothing of kube-proxy's own is loaded from a hand-written ruleset any more.
    for (const { n } of nodes)
      for (const f of [
        ...(n.state.ipsets ?? []),
        ...(n.state.iptables ?? []),
        ...(n.state.ip6tables ?? []),
        ...(n.state.nft ?? []),
      ])
        t.notMatch(
          f,
          /^(ipvs-mode6?\.ipset|kube-proxy-(ipvs-mode6?|nft-v[\d.]+-ip6?)\.(rules|nft))$/,
          `${n.name}: ${f} is no hand-built kube-proxy state`,
        );
    t.same(
      nodes.flatMap(({ n }) => n.state.ipsetLines ?? []).filter((l) => / KUBE-/.test(l)),
      [],
      "no kube-proxy ipset member written by hand",
    );
  },
);
