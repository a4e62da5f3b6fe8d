import t from "tap";
import { ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";

t.test("changed IPVS timeouts are told; the kernel defaults are not", async (t) => {
  const base = ipvsNode();
  const tuned = judge(
    ipvsNode({ ipvs: { ...base.ipvs!, timeouts: { tcp: 7200, tcpFin: 30, udp: 60 } } }),
    new Map(),
    NOW,
  );
  t.ok(ids(tuned).includes("ipvs-timeouts-set"));
  t.notOk(ids(judge(base, new Map(), NOW)).includes("ipvs-timeouts-set"));
});
