import t from "tap";
import { readFileSync } from "node:fs";
import { parseIpRuleJson } from "../../../agent/parse/ip-rule-json.js";

// What iproute2 6.1 printed for real rules (test/fixtures/tools/ip/README.md says how they were made).
const FIX = new URL("../../fixtures/tools/ip/", import.meta.url);
const text = (f: string) => readFileSync(new URL(f, FIX), "utf8");

t.test("IPv4 rules: address selectors, inversion, the rule as ip rule prints it", async (t) => {
  const r = parseIpRuleJson(text("rule-show-v4.json"), "ip -j -4 rule show");
  if (!r.ok) return t.fail(r.error);
  t.same(
    r.value.map((x) => [x.priority, x.not, x.src, x.srcLen, x.dst, x.dstLen]),
    [
      [0, false, "all", null, null, null],
      [100, false, "10.96.0.0", 12, null, null],
      [101, true, "all", null, "10.96.0.10", null],
      [102, false, "all", null, "10.96.0.11", null],
      [104, false, "all", null, null, null],
      [32766, false, "all", null, null, null],
      [32767, false, "all", null, null, null],
    ],
  );
  t.same(
    r.value.map((x) => x.text),
    [
      "0: from all lookup local",
      "100: from 10.96.0.0/12 lookup 100",
      "101: not from all to 10.96.0.10 fwmark 0x4/0xf iif eth0 lookup 200",
      "102: from all to 10.96.0.11 prohibit",
      "104: from all fwmark 0x1 lookup 400",
      "32766: from all lookup main",
      "32767: from all lookup default",
    ],
  );
});

t.test("IPv6 rules", async (t) => {
  const r = parseIpRuleJson(text("rule-show-v6.json"), "ip -j -6 rule show");
  if (!r.ok) return t.fail(r.error);
  t.same(r.value[1], {
    priority: 102,
    not: false,
    src: "all",
    srcLen: null,
    dst: "fd00:10:96::",
    dstLen: 108,
    text: "102: from all to fd00:10:96::/108 prohibit",
  });
});

t.test("not ip's JSON, or not its shape: a named error, never an empty list of rules", async (t) => {
  const garbage = parseIpRuleJson("<html>", "ip -j -4 rule show");
  t.notOk(garbage.ok);
  t.match(!garbage.ok && garbage.error, /ip -j -4 rule show is not JSON/);
  const shape = parseIpRuleJson('[{"priority":"x","src":"all"}]', "ip -j -4 rule show");
  t.match(!shape.ok && shape.error, /unexpected shape/);
});
