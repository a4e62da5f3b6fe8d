import t from "tap";
import { ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";
import { configz, metrics } from "../../../helpers/facts.js";

const ID = "localhost-nodeports-not-measurable";
const COUNTER = "kubeproxy_iptables_localhost_nodeports_accepted_packets_total";
const iptablesNode = (values: Record<string, number>, version: string, npa: string[] = []) =>
  ipvsNode({
    proxyMode: { mode: "iptables" },
    configz: configz({ mode: "iptables", nodePortAddresses: npa }),
    kubeProxyMetrics: metrics(
      { kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 10, ...values },
      version,
    ),
  });
const at = (...a: Parameters<typeof iptablesNode>) => judge(iptablesNode(...a), new Map(), NOW);

t.test(
  "iptables mode before 1.31: the counter does not exist, so 'not measurable', never silence",
  async (t) => {
    const j = at({}, "v1.30.8");
    t.ok(ids(j).includes(ID));
    const f = j.findings.find((x) => x.id === ID);
    t.equal(f?.severity, "info");
    t.equal(f?.blocksMigration, false);
    t.match(f?.title, /predates the counter \(added in v1\.31\)/);
    t.match(f?.remedy, /conntrack -L -d 127\.0\.0\.1/);
    t.notOk(ids(j).includes("localhost-nodeports-in-use"));
  },
);

t.test("1.31+ with the nfacct counter unreadable: not measurable either", async (t) => {
  const f = at({}, "v1.33.1").findings.find((x) => x.id === ID);
  t.match(f?.title, /nfacct counter could not be read/);
});

t.test("the counter is there: it decides, this finding stays out", async (t) => {
  t.notOk(ids(at({ [COUNTER]: 0 }, "v1.31.4")).includes(ID));
  const used = at({ [COUNTER]: 12 }, "v1.31.4");
  t.notOk(ids(used).includes(ID));
  t.ok(ids(used).includes("localhost-nodeports-in-use"));
});

t.test("not applicable outside iptables mode, nor when nodePortAddresses leaves out loopback", async (t) => {
  t.notOk(ids(judge(ipvsNode(), new Map(), NOW)).includes(ID));
  t.notOk(ids(at({}, "v1.30.8", ["192.168.4.0/24"])).includes(ID));
  t.ok(ids(at({}, "v1.30.8", ["127.0.0.0/8", "192.168.4.0/24"])).includes(ID));
});

t.test("info: the verdict is the one the node has with the counter read as 0", async (t) => {
  t.equal(at({}, "v1.30.8").verdict, at({ [COUNTER]: 0 }, "v1.31.4").verdict);
});
