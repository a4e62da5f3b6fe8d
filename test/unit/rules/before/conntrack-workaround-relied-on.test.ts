import t from "tap";
import { ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";

const liberal = (v: string) => ({
  values: [{ name: "net.netfilter.nf_conntrack_tcp_be_liberal", value: v }],
});

t.test("nf_conntrack_tcp_be_liberal=1 before the switch is told; 0 is not", async (t) => {
  t.ok(
    ids(judge(ipvsNode({ sysctls: liberal("1") }), new Map(), NOW)).includes(
      "conntrack-workaround-relied-on",
    ),
  );
  t.notOk(
    ids(judge(ipvsNode({ sysctls: liberal("0") }), new Map(), NOW)).includes(
      "conntrack-workaround-relied-on",
    ),
  );
});
