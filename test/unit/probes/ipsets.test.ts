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

t.test("ipsets: kube-proxy's sets are marked, the others are not", async (t) => {
  const d = stubTools(t, { ipset: recorded(fx("ipsets/kube/ipset-list-terse.txt"), IPSET_ARGS) });
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
  t.same(d.calls(), ["ipset list -terse"]);

  const none = await ipsetsProbe.run(
    isolatedContext({
      sysRoot: fx("sys"),
      tools: stubTools(t, { ipset: recorded(fx("ipsets/none/ipset-list-terse.txt")) }),
    }),
  );
  t.same(none, { ok: true, facts: { available: true, sets: [] } });
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
