import t from "tap";
import { addresses, ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";
import { vs } from "../../../helpers/facts.js";

// What the node shows of sessionAffinity: ClientIP in ipvs mode: each of a Service's virtual servers
// persistent on its own (the ClusterIP, a NodePort on each address), which nftables mode replaces by one
// affinity per endpoint across all the Service's IPs.
const ID = "ipvs-session-affinity-per-virtual-server";
const P = { flags: ["persistent"], persistentTimeoutJiffies: 2_700_000 };

t.test(
  "persistent virtual servers of kube-proxy's: told, each with its timeout as the kernel has it",
  async (t) => {
    const n = ipvsNode();
    n.ipvs!.virtualServers = [vs("10.96.0.1", 443), vs("10.96.0.10", 53, P)];
    const f = judge(n, new Map(), NOW).findings.find((x) => x.id === ID);
    t.equal(f?.severity, "info");
    t.equal(f?.stage, "before");
    t.match(f?.title, /^1 IPVS virtual server\(s\) of kube-proxy's are persistent/);
    t.match(f?.title, /one affinity per endpoint across all of a Service's IPs/);
    t.same(f?.evidence, {
      count: 1,
      virtualServers: ["TCP 10.96.0.10:53 persistent 2700000 jiffies"],
    });
  },
);

t.test("none persistent, or only someone else's: silent", async (t) => {
  t.notOk(ids(judge(ipvsNode(), new Map(), NOW)).includes(ID));
  const other = ipvsNode({ addresses: addresses("192.168.4.11", ["192.168.4.200"]) });
  other.ipvs!.virtualServers.push(vs("192.168.4.200", 80, { scheduler: "wlc", ...P }));
  t.notOk(ids(judge(other, new Map(), NOW)).includes(ID), "keepalived's persistent VIP is not a Service");
  const moved = ipvsNode({ proxyMode: { mode: "nftables" } });
  moved.ipvs!.virtualServers = [vs("10.96.0.10", 53, P)];
  t.notOk(ids(judge(moved, new Map(), NOW)).includes(ID), "not before the switch: not this check");
});
