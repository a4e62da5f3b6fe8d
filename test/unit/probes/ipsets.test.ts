import t from "tap";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { IpsetFacts } from "../../../agent/facts/ipvs.js";
import { ipsetsProbe } from "../../../agent/probes/ipsets.js";
import { isolatedContext, stubTools, tree } from "../../helpers/probe-context.js";
import { recorded } from "../../helpers/tool-scripts.js";

// The probes against recorded fixture trees (procRoot/sysRoot) and stand-in tools that print the
// recorded answers through the real ToolRunner.
const fx = (path: string) => fileURLToPath(new URL(`../../fixtures/ipvs/${path}`, import.meta.url));

const IPSET_ARGS = "list -terse";

/** One set's block of a recorded full `ipset list`: what `ipset list <set>` prints for it. */
function block(file: string, set: string): string {
  const blocks = readFileSync(file, "utf8").split("\n\n");
  return `${blocks.find((b) => b.startsWith(`Name: ${set}\n`))!.trimEnd()}\n`;
}

t.test("ipsets: kube-proxy's sets are marked, the others are not", async (t) => {
  const d = stubTools(t, {
    ipset: [
      recorded(fx("ipsets/kube/ipset-list-terse.txt"), IPSET_ARGS),
      {
        stdout: block(fx("ipsets/kube/ipset-list.txt"), "KUBE-NODE-PORT-TCP"),
        args: "list KUBE-NODE-PORT-TCP",
      },
    ],
  });
  const r = await ipsetsProbe.run(isolatedContext({ sysRoot: fx("sys"), tools: d }));
  if (!r.ok) return t.fail(JSON.stringify(r.error));
  IpsetFacts.parse(r.facts);
  t.equal(r.facts.available, true);
  t.equal(r.facts.sets.length, 37);
  t.equal(r.facts.sets.filter((s) => s.kubeProxy).length, 34);
  t.same(
    r.facts.sets.filter((s) => !s.kubeProxy).map((s) => s.name),
    ["f2b-sshd", "cali40all-ipam-pools", "KUBE-CUSTOM-ALLOW"],
  );
  t.same(
    r.facts.sets.find((s) => s.name === "KUBE-6-NODE-PORT-LOCAL-SCTP-HAS"),
    {
      name: "KUBE-6-NODE-PORT-LOCAL-SCTP-HAS",
      type: "hash:ip,port",
      family: "inet6",
      entries: 0,
      references: 0,
      kubeProxy: true,
    },
  );
  // The NodePorts, from the one KUBE-NODE-PORT-* set with members.
  t.same(r.facts.nodePorts, ["TCP:30080"]);
  t.same(d.calls(), ["ipset list -terse", "ipset list KUBE-NODE-PORT-TCP"]);

  const none = await ipsetsProbe.run(
    isolatedContext({
      sysRoot: fx("sys"),
      tools: stubTools(t, { ipset: recorded(fx("ipsets/none/ipset-list-terse.txt")) }),
    }),
  );
  t.same(none, {
    ok: true,
    facts: {
      available: true,
      sets: [],
      nodePorts: [],
      healthCheckNodePorts: [],
      etpLocal: { addresses: [], nodePorts: [] },
    },
  });
});

t.test("ipsets: ipvs mode's externalTrafficPolicy: Local destinations, from the -LOCAL sets", async (t) => {
  const terse = [
    "Name: KUBE-LOAD-BALANCER-LOCAL\nType: hash:ip,port\nRevision: 5\nHeader: family inet hashsize 1024 maxelem 65536 comment\nSize in memory: 320\nReferences: 1\nNumber of entries: 1",
    "Name: KUBE-NODE-PORT-LOCAL-TCP\nType: bitmap:port\nRevision: 3\nHeader: range 0-65535 comment\nSize in memory: 8392\nReferences: 1\nNumber of entries: 1",
    "",
  ].join("\n\n");
  const d = stubTools(t, {
    ipset: [
      { stdout: terse, args: "list -terse" },
      {
        stdout:
          'Name: KUBE-LOAD-BALANCER-LOCAL\nType: hash:ip,port\nMembers:\n203.0.113.10,tcp:443 comment "web/shop:https"\n',
        args: "list KUBE-LOAD-BALANCER-LOCAL",
      },
      {
        stdout:
          'Name: KUBE-NODE-PORT-LOCAL-TCP\nType: bitmap:port\nMembers:\n30443 comment "web/shop:https"\n',
        args: "list KUBE-NODE-PORT-LOCAL-TCP",
      },
    ],
  });
  const r = await ipsetsProbe.run(isolatedContext({ sysRoot: fx("sys"), tools: d }));
  if (!r.ok) return t.fail(JSON.stringify(r.error));
  t.same(r.facts.etpLocal, { addresses: ["TCP 203.0.113.10:443"], nodePorts: ["TCP:30443"] });
});

t.test("ipsets: without ip_set in sysfs, ipset is not run (it would load the module)", async (t) => {
  const sys = tree(t);
  mkdirSync(join(sys, "module/ip_tables"), { recursive: true });
  const d = stubTools(t, { ipset: recorded(fx("not-loaded/ipset-list-terse.txt")) });
  t.same(await ipsetsProbe.run(isolatedContext({ sysRoot: sys, tools: d })), {
    ok: true,
    facts: { available: false, sets: [] },
  });
  t.same(d.calls(), []);
});

t.test("ipsets: failures are named", async (t) => {
  // No sysfs to ask: ipset answers, here as a kernel without ip_set does.
  const notLoaded = await ipsetsProbe.run(
    isolatedContext({
      tools: stubTools(t, { ipset: recorded(fx("not-loaded/ipset-list-terse.txt"), IPSET_ARGS) }),
    }),
  );
  t.match(notLoaded, {
    ok: false,
    error: { kind: "exit-status", message: "ipset exited 1: ipset v7.17: Cannot open session to kernel." },
  });
  const denied = await ipsetsProbe.run(
    isolatedContext({
      sysRoot: fx("sys"),
      tools: stubTools(t, {
        ipset: { exit: 1, stderr: "ipset v7.17: Kernel error received: Operation not permitted\n" },
      }),
    }),
  );
  t.match(denied, { ok: false, error: { kind: "not-permitted" } });
  t.match(await ipsetsProbe.run(isolatedContext({ sysRoot: fx("sys"), tools: stubTools(t, {}) })), {
    ok: false,
    error: { kind: "missing-tool", command: "ipset list -terse" },
  });
  const terse = readFileSync(fx("ipsets/kube/ipset-list-terse.txt"), "utf8");
  const truncated = await ipsetsProbe.run(
    isolatedContext({
      sysRoot: fx("sys"),
      tools: stubTools(t, { ipset: { stdout: terse.slice(0, terse.indexOf("References")) } }),
    }),
  );
  t.match(truncated, { ok: false, error: { kind: "garbage", command: "ipset list -terse" } });
});

t.test("ipsets: NodePorts of a custom --service-node-port-range, from kube-proxy's own sets", async (t) => {
  // Recorded on the host (ipset v7.17) from ipvs-mode.ipset plus NodePorts 40080/tcp and 40053/udp.
  const dir = "ipsets/custom-range";
  const d = stubTools(t, {
    ipset: [
      recorded(fx(`${dir}/ipset-list-terse.txt`), IPSET_ARGS),
      recorded(fx(`${dir}/ipset-list-KUBE-NODE-PORT-TCP.txt`), "list KUBE-NODE-PORT-TCP"),
      recorded(fx(`${dir}/ipset-list-KUBE-NODE-PORT-UDP.txt`), "list KUBE-NODE-PORT-UDP"),
      recorded(fx(`${dir}/ipset-list-KUBE-HEALTH-CHECK-NODE-PORT.txt`), "list KUBE-HEALTH-CHECK-NODE-PORT"),
    ],
  });
  const r = await ipsetsProbe.run(isolatedContext({ sysRoot: fx("sys"), tools: d }));
  if (!r.ok) return t.fail(JSON.stringify(r.error));
  IpsetFacts.parse(r.facts);
  t.same(r.facts.nodePorts, ["TCP:30080", "TCP:40080", "UDP:40053"]);
  // The healthCheckNodePort ipvs-mode.ipset holds (recorded on the host the same way).
  t.same(r.facts.healthCheckNodePorts, [30000]);
});

t.test("ipsets: a NodePort set that cannot be listed leaves the NodePorts unread, not empty", async (t) => {
  const dir = "ipsets/custom-range";
  const d = stubTools(t, {
    ipset: [
      recorded(fx(`${dir}/ipset-list-terse.txt`), IPSET_ARGS),
      {
        stdout: "",
        stderr: "ipset v7.17: The set with the given name does not exist\n",
        exit: 1,
        args: "list KUBE-NODE-PORT-TCP",
      },
    ],
  });
  const r = await ipsetsProbe.run(isolatedContext({ sysRoot: fx("sys"), tools: d }));
  if (!r.ok) return t.fail(JSON.stringify(r.error));
  t.equal(r.facts.nodePorts, null);
  t.equal(r.facts.healthCheckNodePorts, null, "KUBE-HEALTH-CHECK-NODE-PORT not listed either: unread");
  t.ok(r.facts.sets.length > 0, "the sets themselves are still read");
});
