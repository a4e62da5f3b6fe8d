import t from "tap";
import { renderText } from "../../../agent/render/text.js";
import { buildReport } from "../../../agent/assemble/report.js";
import { NodeReport } from "../../../agent/report/schema.js";
import type { ProbeRun } from "../../../agent/facts/sources.js";

const at = new Date("2026-11-29T12:00:00Z");
const runs: ProbeRun[] = [
  {
    name: "kernel",
    durationMs: 1,
    outcome: { ok: true, facts: { release: "5.4.0-216-generic", major: 5, minor: 4, patch: 0 } },
  },
  { name: "kube-proxy-mode", durationMs: 1, outcome: { ok: true, facts: { mode: "ipvs" } } },
  {
    name: "kube-ipvs0",
    durationMs: 1,
    outcome: {
      ok: true,
      facts: {
        present: true,
        kind: "dummy",
        operState: "DOWN",
        flags: [],
        addresses: [{ family: "inet", address: "10.96.0.1", prefixLen: 32 }],
      },
    },
  },
  {
    name: "ipvs",
    durationMs: 2,
    outcome: { ok: false, error: { kind: "not-permitted", message: "/proc/net/ip_vs: EACCES\u001b[2J" } },
  },
];

t.test("a report renders by severity, names failed probes, and validates against the schema", async (t) => {
  const r = buildReport(runs, {
    node: "node-\u001b]0;evil\u0007-1",
    agentVersion: "test",
    startedAt: at,
    finishedAt: at,
  });
  t.ok(NodeReport.safeParse(r).success);
  const plain = renderText(r, false);
  t.match(plain, /ERROR \(\d+\)/);
  t.match(plain, /kernel-too-old-for-nftables/);
  t.match(plain, /PROBES THAT FAILED \(1 of 4\): their facts are missing, not zero/);
  t.match(plain, /ipvs: not-permitted/);
  t.notOk(plain.includes("\u001b"), "no escape sequence from the node reaches the terminal");
  t.match(plain, /node-\\u001b\]0;evil\\u0007-1/);
  const coloured = renderText(r, true);
  t.ok(coloured.includes("\u001b[31m"), "colour only when asked");
});

// What a check filtered as noise is printed, escaped like everything a node supplies.
t.test("what a check saw and did not count is said, escaped", async (t) => {
  const r = buildReport(
    [
      { name: "kube-proxy-mode", durationMs: 1, outcome: { ok: true, facts: { mode: "ipvs" } } },
      {
        name: "addresses",
        durationMs: 1,
        outcome: {
          ok: true,
          facts: {
            interfaces: [
              {
                name: "cni0",
                kind: "bridge",
                operState: "UP",
                addresses: [{ family: "inet", address: "10.244.0.1", prefixLen: 24, scope: "global" }],
              },
              {
                name: "cali\u001b[2Jx",
                kind: "veth",
                operState: "UP",
                addresses: [{ family: "inet", address: "10.244.0.7", prefixLen: 32, scope: "global" }],
              },
            ],
            primary: { ipv4: "192.0.2.10", ipv6: null, source: "config" },
          },
        },
      },
    ],
    { node: "n", agentVersion: "test", startedAt: at, finishedAt: at },
  );
  const plain = renderText(r, false);
  t.match(plain, /seen, not counted \(nothing to do\): 2/);
  t.match(
    plain,
    /- 10\.244\.0\.1 \(cni0\) \[nodeport-addresses-shrink\]: the CNI bridge plugin's pod bridge/,
  );
  t.notOk(plain.includes("\u001b"), "an interface name cannot reach the terminal raw");
  t.notMatch(plain, /nodeport-addresses-shrink\]\s*$/m);
});
