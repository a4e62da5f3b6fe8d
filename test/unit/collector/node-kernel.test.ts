// One node shape after the join: one kernel string (the API's when the API lists the node, else the
// agent's) and one capability field that says where it came from.
import t from "tap";
import { rollup } from "../../../collector/plan/rollup.js";
import type { NodeObservation } from "../../../collector/report/schema.js";
import { apiNode, input, ok } from "../../helpers/fleet.js";

const agentSaid = (kernel: string | null, capable: boolean | null): NodeObservation => ({
  ...ok("n1", "ipvs", "attention"),
  kernel,
  kernelNftables: capable === null ? null : { capable, from: "agent" },
});

const only = (obs: NodeObservation, api: ReturnType<typeof apiNode>[] | null) => {
  const i = input([obs], api ?? []);
  const r = rollup(api === null ? { ...i, cluster: null } : i);
  return r.nodes.find((n) => n.node === "n1")!;
};

t.test("the API's kernel wins over the agent's, and the capability says it came from the API", async (t) => {
  const n = only(agentSaid("6.8.0-1015-aws", true), [apiNode("n1", "4.18.0-553.el8_10.x86_64")]);
  t.equal(n.kernel, "4.18.0-553.el8_10.x86_64");
  t.same(n.kernelNftables, { capable: false, from: "api" });
  t.equal(only(agentSaid(null, null), [apiNode("n1", "6.1.0-26-amd64")]).kernelNftables?.from, "api");
});

t.test("without the API, the agent's kernel decides and the capability says the agent", async (t) => {
  const n = only(agentSaid("5.10.230-223.885.amzn2.x86_64", null), null);
  t.equal(n.kernel, "5.10.230-223.885.amzn2.x86_64");
  t.same(n.kernelNftables, { capable: false, from: "agent" });
});

t.test(
  "no kernel string (Prometheus carries none): the agent's own judgement, named as the agent's",
  async (t) => {
    const api = { ...apiNode("n1"), kernelVersion: null };
    t.same(only(agentSaid(null, true), [api]).kernelNftables, { capable: true, from: "agent" });
    t.equal(only(agentSaid(null, true), [api]).kernel, null);
  },
);

t.test("no kernel known anywhere is unknown, never false", async (t) => {
  const api = { ...apiNode("n1"), kernelVersion: null };
  t.equal(only(agentSaid(null, null), [api]).kernelNftables, null);
  const plan = rollup(input([agentSaid(null, null)], [api])).plan.find((s) => s.id === "kernels")!;
  t.equal(plan.status, "todo");
  t.match(plan.detail, /1 node\(s\) with an unknown kernel/);
});
