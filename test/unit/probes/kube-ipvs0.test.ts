import t from "tap";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { KubeIpvs0Facts } from "../../../agent/facts/ipvs.js";
import { parseKubeIpvs0Json } from "../../../agent/parse/kube-ipvs0.js";
import { addressesProbe } from "../../../agent/probes/addresses.js";
import { kubeIpvs0Probe } from "../../../agent/probes/kube-ipvs0.js";
import { runProbes } from "../../../agent/scan.js";
import { fixture, isolatedContext, probeSettings, stubTools } from "../../helpers/probe-context.js";
import { recorded } from "../../helpers/tool-scripts.js";

// The probes against recorded fixture trees (procRoot/sysRoot) and stand-in tools that print the
// recorded answers through the real ToolRunner.
const fx = (path: string) => fileURLToPath(new URL(`../../fixtures/ipvs/${path}`, import.meta.url));

const IP_ARGS = "-j -d addr show dev kube-ipvs0";

t.test("kube-ipvs0: present with addresses, present without, absent", async (t) => {
  const present = await kubeIpvs0Probe.run(
    isolatedContext({ tools: stubTools(t, { ip: recorded(fx("kube-ipvs0/present.json"), IP_ARGS) }) }),
  );
  if (!present.ok) return t.fail(JSON.stringify(present.error));
  KubeIpvs0Facts.parse(present.facts);
  t.match(present.facts, { present: true, kind: "dummy", operState: "DOWN" });
  t.same(
    present.facts.addresses.map((a) => `${a.address}/${a.prefixLen}`),
    ["10.96.0.1/32", "10.96.0.10/32", "10.96.143.20/32", "fd00:10:96::a/128", "fd00:10:96::1/128"],
  );

  const empty = await kubeIpvs0Probe.run(
    isolatedContext({ tools: stubTools(t, { ip: recorded(fx("kube-ipvs0/empty.json"), IP_ARGS) }) }),
  );
  t.match(empty, { ok: true, facts: { present: true, addresses: [] } });

  const absent = await kubeIpvs0Probe.run(
    isolatedContext({ tools: stubTools(t, { ip: recorded(fx("kube-ipvs0/absent.json"), IP_ARGS) }) }),
  );
  t.same(absent, {
    ok: true,
    facts: { present: false, kind: null, operState: null, flags: [], addresses: [] },
  });
});

t.test("kube-ipvs0: other failures are named", async (t) => {
  const missing = await kubeIpvs0Probe.run(isolatedContext({ tools: stubTools(t, {}) }));
  t.match(missing, { ok: false, error: { kind: "missing-tool", command: `ip ${IP_ARGS}` } });

  const denied = await kubeIpvs0Probe.run(
    isolatedContext({
      tools: stubTools(t, {
        ip: { exit: 1, stderr: "Cannot open netlink socket: Operation not permitted\n" },
      }),
    }),
  );
  t.match(denied, { ok: false, error: { kind: "not-permitted", message: /Operation not permitted/ } });

  const otherExit1 = await kubeIpvs0Probe.run(
    isolatedContext({
      tools: stubTools(t, { ip: { exit: 1, stderr: "RTNETLINK answers: Invalid argument\n" } }),
    }),
  );
  t.match(otherExit1, {
    ok: false,
    error: { kind: "exit-status", message: "ip exited 1: RTNETLINK answers: Invalid argument" },
  });

  const exit255 = await kubeIpvs0Probe.run(
    isolatedContext({ tools: stubTools(t, { ip: { exit: 255, stderr: 'Object "addr" is unknown\n' } }) }),
  );
  t.match(exit255, { ok: false, error: { kind: "exit-status", message: /^ip exited 255/ } });

  const garbage = await kubeIpvs0Probe.run(
    isolatedContext({ tools: stubTools(t, { ip: { stdout: "1: kube-ipvs0: <BROADCAST,NOARP>\n" } }) }),
  );
  t.match(garbage, { ok: false, error: { kind: "garbage", message: /not JSON/ } });
});

// The addresses probe lists every link; kube-ipvs0's probe reads its link from that listing instead
// of running `ip` a second time (each spawn from the agent costs ~0.5 s of fork in UML). Both
// listings were recorded in one state (test/fixtures/ipvs/README.md).
t.test("kube-ipvs0: taken from the addresses probe's listing, without a second ip call", async (t) => {
  for (const [listing, expected] of [
    [
      "listing-present.json",
      parseKubeIpvs0Json(readFileSync(fx("kube-ipvs0/listing-present-dev.json"), "utf8")),
    ],
    [
      "listing-absent.json",
      { ok: true, value: { present: false, kind: null, operState: null, flags: [], addresses: [] } },
    ],
  ] as const) {
    if (!expected.ok) return t.fail("the dedicated recording parses");
    const tools = stubTools(t, {
      ip: [
        recorded(fx(`kube-ipvs0/${listing}`), "-j -d addr show"),
        recorded(fixture("tools/ip/route-default-none.json"), "-j route show default"),
        recorded(fixture("tools/ip/route-default-v6-none.json"), "-j -6 route show default"),
      ],
    });
    const [addresses, ipvs0] = await runProbes(
      { ...isolatedContext({ tools }), ...probeSettings(), probeTimeoutMs: 30_000 },
      [addressesProbe, kubeIpvs0Probe],
    );
    t.ok(addresses!.outcome.ok, `${listing}: the addresses probe read it`);
    t.same(
      ipvs0!.outcome,
      { ok: true, facts: expected.value },
      `${listing}: what \`ip ... dev kube-ipvs0\` says`,
    );
    t.same(
      tools.calls().filter((c) => c.includes("dev kube-ipvs0")),
      [],
      `${listing}: no second ip call`,
    );
  }
});

t.test("kube-ipvs0: its own ip call when the addresses probe could not list the links", async (t) => {
  const tools = stubTools(t, {
    ip: [{ args: "-j -d addr show", stdout: "not json" }, recorded(fx("kube-ipvs0/present.json"), IP_ARGS)],
  });
  const [addresses, ipvs0] = await runProbes(
    { ...isolatedContext({ tools }), ...probeSettings(), probeTimeoutMs: 30_000 },
    [addressesProbe, kubeIpvs0Probe],
  );
  t.match(addresses!.outcome, { ok: false, error: { kind: "garbage" } });
  t.match(ipvs0!.outcome, { ok: true, facts: { present: true, kind: "dummy" } });
  t.same(
    tools.calls().filter((c) => c.includes("dev kube-ipvs0")),
    [`ip ${IP_ARGS}`],
  );
});
