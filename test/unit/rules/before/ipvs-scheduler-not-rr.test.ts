import t from "tap";
import { ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";
import { configz } from "../../../helpers/facts.js";

t.test("an ipvs node on lc is told; on rr it is not", async (t) => {
  const lc = judge(
    ipvsNode({ configz: configz({ ipvs: { ...configz().ipvs, scheduler: "lc" } }) }),
    new Map(),
    NOW,
  );
  t.ok(ids(lc).includes("ipvs-scheduler-not-rr"));
  t.equal(lc.findings.find((f) => f.id === "ipvs-scheduler-not-rr")?.evidence.configured, "lc");
  t.notOk(ids(judge(ipvsNode(), new Map(), NOW)).includes("ipvs-scheduler-not-rr"));
});
