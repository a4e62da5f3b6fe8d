import t from "tap";
import { ids, ipvsNode, judge, kernel, NOW } from "../../../helpers/rules.js";
import { emptyFacts, noKernelState } from "../../../helpers/facts.js";

t.test("no kube-proxy answering and no kube-proxy state: kube-proxy-free; otherwise not", async (t) => {
  const refused = new Map([
    ["kube-proxy-mode", { kind: "unreachable" as const, message: "connect ECONNREFUSED" }],
  ]);
  const bare = emptyFacts({ ...noKernelState, kernel: kernel("6.8.0") });
  t.ok(ids(judge(bare, refused, NOW)).includes("kube-proxy-free"), "nothing listens, nothing in the kernel");
  const garbage = new Map([["kube-proxy-mode", { kind: "garbage" as const, message: "not a mode" }]]);
  t.notOk(ids(judge(bare, garbage, NOW)).includes("kube-proxy-free"), "something answers and makes no sense");
  t.notOk(ids(judge(ipvsNode(), new Map(), NOW)).includes("kube-proxy-free"), "a node running kube-proxy");
});
