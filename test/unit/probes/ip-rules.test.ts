import t from "tap";
import { ipRulesProbe } from "../../../agent/probes/ip-rules.js";
import { fixture, isolatedContext, stubTools, tree } from "../../helpers/probe-context.js";
import { recorded } from "../../helpers/tool-scripts.js";

// The ip-rules probe through the real ToolRunner with a stand-in `ip` printing what iproute2 6.1
// printed (test/fixtures/tools/ip/README.md). Real kernel rules: test/kernel/ip-rules-netns.test.ts.
const V4 = recorded(fixture("tools/ip/rule-show-v4.json"), "-j -4 rule show");
const V6 = recorded(fixture("tools/ip/rule-show-v6.json"), "-j -6 rule show");
const IPV6_ON = { sys: { net: { ipv6: { conf: { all: { disable_ipv6: "0\n" } } } } } };

t.test("both families read", async (t) => {
  const tools = stubTools(t, { ip: [V4, V6] });
  const r = await ipRulesProbe.run(isolatedContext({ procRoot: tree(t, IPV6_ON), tools }));
  if (!r.ok) return t.fail(JSON.stringify(r.error));
  t.same(
    r.facts.families.map((f) => [f.family, f.available, f.rules.length]),
    [
      ["inet", true, 7],
      ["inet6", true, 3],
    ],
  );
});

t.test("a kernel without IPv6: that family unavailable, not failed, and ip -6 not asked", async (t) => {
  const tools = stubTools(t, { ip: [V4, V6] });
  const r = await ipRulesProbe.run(isolatedContext({ procRoot: tree(t), tools }));
  if (!r.ok) return t.fail(JSON.stringify(r.error));
  t.same(r.facts.families[1], { family: "inet6", available: false, rules: [] });
  t.same(tools.calls(), ["ip -j -4 rule show"]);
});

t.test("ip fails or prints garbage: the probe fails by name, never an empty list of rules", async (t) => {
  const failing = stubTools(t, { ip: { stderr: "RTNETLINK answers: Operation not permitted\n", exit: 2 } });
  const r = await ipRulesProbe.run(isolatedContext({ procRoot: tree(t, IPV6_ON), tools: failing }));
  t.notOk(r.ok);
  t.match(!r.ok && r.error, { kind: /not-permitted|exit-status/ });
  const garbage = stubTools(t, { ip: [{ stdout: "<html>", args: "-j -4 rule show" }, V6] });
  const g = await ipRulesProbe.run(isolatedContext({ procRoot: tree(t, IPV6_ON), tools: garbage }));
  t.match(!g.ok && g.error, { kind: "garbage", command: "ip -j -4 rule show" });
  const missing = await ipRulesProbe.run(
    isolatedContext({ procRoot: tree(t, IPV6_ON), tools: stubTools(t, {}) }),
  );
  t.match(!missing.ok && missing.error, { kind: "missing-tool" });
});
