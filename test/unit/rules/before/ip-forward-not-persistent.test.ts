import t from "tap";
import { sysctlConfigProbe } from "../../../../agent/probes/sysctl-config.js";
import { iptablesBackend } from "../../../helpers/facts.js";
import { fixture, probeContext } from "../../../helpers/probe-context.js";
import { ids, ipvsNode, judge, nftNode, NOW } from "../../../helpers/rules.js";

const ID = "ip-forward-not-persistent";

// The persistent configuration as the probe reads it from the host trees in test/fixtures/sysctl.
async function config(scenario: string) {
  const r = await sysctlConfigProbe.run(probeContext({ hostRoot: fixture(`sysctl/${scenario}`) }));
  if (!r.ok) throw new Error(JSON.stringify(r.error));
  return r.facts;
}
const running = (v: string) => ({ values: [{ name: "net.ipv4.ip_forward", value: v }] });

t.test("forwarding on now, nothing persistent sets it: warning, with the file to add", async (t) => {
  const j = judge(
    ipvsNode({ sysctls: running("1"), sysctlConfig: await config("debian-12") }),
    new Map(),
    NOW,
  );
  const f = j.findings.find((x) => x.id === ID);
  if (f === undefined) return t.fail(`no ${ID}: ${ids(j).join(", ")}`);
  t.match(f, { severity: "warning", stage: "before", blocksMigration: false });
  t.same(f.evidence, {
    running: "1",
    persistent: null,
    setBy: null,
    filesRead: 4,
    setAtStartBy: [],
  });
  t.match(f.remedy, /\/etc\/sysctl\.d\/99-kubernetes-ip-forward\.conf/);
  t.match(f.remedy, /net\.ipv4\.ip_forward = 1/);
  // Forwarding is on already: nothing to apply now, and `sysctl --system` would re-apply every file,
  // undoing what network plugins set at runtime (rp_filter and the like).
  t.notMatch(f.remedy, /sysctl --system/);
  t.match(f.remedy, /next boot/);
  t.equal(j.verdict, "attention", "not ready, not blocked");
});

t.test("a later file sets it to 0: the fix is that line, not a new file it would override", async (t) => {
  const j = judge(ipvsNode({ sysctls: running("1"), sysctlConfig: await config("zeroed") }), new Map(), NOW);
  const f = j.findings.find((x) => x.id === ID);
  if (f === undefined) return t.fail(`no ${ID}`);
  t.same(f.evidence, {
    running: "1",
    persistent: "0",
    setBy: "/etc/sysctl.conf:28 (net.ipv4.ip_forward)",
    filesRead: 5,
    setAtStartBy: [],
  });
  t.match(f.title, /sets it to 0/);
  t.match(f.remedy, /\/etc\/sysctl\.conf line 28/);
});

t.test("set persistently (kubeadm's k8s.conf, a glob, by name order): nothing to do", async (t) => {
  for (const s of ["kubeadm", "hardened", "glob"]) {
    const j = judge(ipvsNode({ sysctls: running("1"), sysctlConfig: await config(s) }), new Map(), NOW);
    t.notOk(ids(j).includes(ID), s);
  }
});

t.test("a masked vendor file sets nothing", async (t) => {
  const j = judge(ipvsNode({ sysctls: running("1"), sysctlConfig: await config("masked") }), new Map(), NOW);
  t.ok(ids(j).includes(ID));
});

t.test("not raised: forwarding off now, after the switch, or not in ipvs mode", async (t) => {
  const debian = await config("debian-12");
  t.notOk(ids(judge(ipvsNode({ sysctls: running("0"), sysctlConfig: debian }), new Map(), NOW)).includes(ID));
  t.notOk(ids(judge(nftNode({ sysctls: running("1"), sysctlConfig: debian }), new Map(), NOW)).includes(ID));
});

t.test("unread is never 'not set': a file not read leaves no finding and no ready node", async (t) => {
  const debian = await config("debian-12");
  const why = { kind: "io" as const, message: "/etc/sysctl.d/90-x.conf: not a regular file" };
  const partial = {
    ...debian,
    files: [...debian.files, { read: false as const, path: "/etc/sysctl.d/90-x.conf", why }],
  };
  const j = judge(
    ipvsNode({ sysctls: running("1"), sysctlConfig: partial }),
    new Map([["sysctl-config", why]]),
    NOW,
  );
  t.notOk(ids(j).includes(ID));
  t.ok(ids(j).includes("scan-incomplete"));
  t.not(j.verdict, "ready");
  // The running value unread: nothing to compare.
  const noRun = judge(ipvsNode({ sysctls: null, sysctlConfig: debian }), new Map([["sysctls", why]]), NOW);
  t.notOk(ids(noRun).includes(ID));
});

// Calico's Felix (ipForwarding: Enabled, the default), the Cilium agent (daemon/cmd enableIPForwarding) and
// dockerd (--ip-forward, on by default) turn forwarding on when they start: on such a node a reboot does not
// leave it off, it leaves it off until they run. What an SRE expects, written before the rule changed: still
// a warning (forwarding rests on a component nobody configured for it), but the title does not claim the
// node stops forwarding, and the evidence names who turns it back on, seen from their FORWARD chains.
t.test("a plugin that turns forwarding on at start is named; the title claims no outage", async (t) => {
  const debian = await config("debian-12");
  const withChains = (b: Parameters<typeof iptablesBackend>[0]) =>
    ipvsNode({ sysctls: running("1"), sysctlConfig: debian, iptables: { backends: [iptablesBackend(b)] } });
  const calico = judge(withChains({ forwardJumps: ["cali-FORWARD", "KUBE-FORWARD"] }), new Map(), NOW);
  const f = calico.findings.find((x) => x.id === ID);
  if (f === undefined) return t.fail(`no ${ID}`);
  t.equal(f.severity, "warning");
  t.same(f.evidence.setAtStartBy, ["Calico (Felix ipForwarding)"]);
  t.notMatch(f.title, /stops forwarding/);
  t.match(f.title, /Calico/);
  const docker = judge(withChains({ dockerChains: ["DOCKER-USER", "DOCKER-FORWARD"] }), new Map(), NOW);
  t.same(docker.findings.find((x) => x.id === ID)?.evidence.setAtStartBy, ["dockerd (--ip-forward)"]);
  // Flannel's bridge plugin sets it only when a pod is set up; nothing seen: the outage claim stands.
  const plain = judge(withChains({ forwardJumps: ["FLANNEL-FWD"] }), new Map(), NOW);
  const p = plain.findings.find((x) => x.id === ID);
  t.same(p?.evidence.setAtStartBy, []);
  t.match(p?.title ?? "", /stops forwarding after its next reboot/);
  // An older agent's report (FORWARD's jumps not listed): nobody is taken for setting it.
  const older = judge(withChains({ forwardJumps: undefined }), new Map(), NOW);
  t.match(older.findings.find((x) => x.id === ID)?.title ?? "", /stops forwarding/);
});
