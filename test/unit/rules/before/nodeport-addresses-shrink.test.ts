import t from "tap";
import { addresses, ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";
import { configz, vs } from "../../../helpers/facts.js";

t.test("NodePorts with traffic on a secondary address are an error; without traffic a warning", async (t) => {
  const f = ipvsNode({ addresses: addresses("192.168.4.11", ["10.0.0.5"]) });
  f.ipvs!.virtualServers.push(
    vs("10.0.0.5", 30080, { activeConns: 3 }),
    vs("192.168.4.11", 30080, { activeConns: 9 }),
  );
  const j = judge(f, new Map(), NOW);
  const x = j.findings.find((y) => y.id === "nodeport-addresses-shrink");
  t.equal(x?.severity, "error");
  t.same(x?.evidence.withConnections, ["TCP 10.0.0.5:30080 (3 active, 0 inactive)"]);
  const quiet = ipvsNode({ addresses: addresses("192.168.4.11", ["10.0.0.5"]) });
  t.equal(
    judge(quiet, new Map(), NOW).findings.find((y) => y.id === "nodeport-addresses-shrink")?.severity,
    "warning",
  );
  const pinned = ipvsNode({
    addresses: addresses("192.168.4.11", ["10.0.0.5"]),
    configz: configz({ nodePortAddresses: ["192.168.4.0/24"] }),
  });
  t.notOk(ids(judge(pinned, new Map(), NOW)).includes("nodeport-addresses-shrink"));
});
