import t from "tap";
import type { IpRule, IpRulesFacts } from "../../../../agent/facts/ip-rules.js";
import type { NodeFacts } from "../../../../agent/report/schema.js";
import { ipvsNode, judge, NOW } from "../../../helpers/rules.js";

// A policy rule whose from/to prefix holds a Service IP bound on kube-ipvs0 (10.96.0.1, 10.96.0.10 on
// this node) sees those packets differently once nftables mode binds nothing and DNATs before routing.
const ID = "ip-rules-keyed-on-service-addresses";
const r = (priority: number, over: Partial<IpRule>): IpRule => ({
  priority,
  not: false,
  src: "all",
  srcLen: null,
  dst: null,
  dstLen: null,
  text: `${priority}: rule`,
  ...over,
});
const KERNEL = [
  r(0, { text: "0: from all lookup local" }),
  r(32766, { text: "32766: from all lookup main" }),
];
const rules = (v4: IpRule[], v6: IpRule[] = []): IpRulesFacts => ({
  families: [
    { family: "inet", available: true, rules: [...KERNEL, ...v4] },
    { family: "inet6", available: true, rules: v6 },
  ],
});
const finding = (f: NodeFacts) => judge(f, new Map(), NOW).findings.find((x) => x.id === ID);

t.test("from the Service CIDR, to one ClusterIP: a warning listing each with its Service IPs", async (t) => {
  const j = judge(
    ipvsNode({
      ipRules: rules([
        r(100, { src: "10.96.0.0", srcLen: 12, text: "100: from 10.96.0.0/12 lookup 100" }),
        r(101, { not: true, dst: "10.96.0.10", text: "101: not from all to 10.96.0.10 lookup 200" }),
      ]),
    }),
    new Map(),
    NOW,
  );
  const f = j.findings.find((x) => x.id === ID);
  t.equal(f?.severity, "warning");
  t.equal(f?.stage, "before");
  t.same(f?.evidence, {
    count: 2,
    rules: [
      "100: from 10.96.0.0/12 lookup 100 (selects Service IPs on kube-ipvs0: 10.96.0.1, 10.96.0.10)",
      "101: not from all to 10.96.0.10 lookup 200 (selects Service IPs on kube-ipvs0: 10.96.0.10)",
    ],
    serviceIpsSelected: 2,
  });
  t.equal(j.verdict, "attention");
});

t.test("rules on no Service address: the kernel's, a pod CIDR, a mark, a zero-length prefix", async (t) => {
  const j = judge(
    ipvsNode({
      ipRules: rules(
        [
          r(100, { src: "10.244.0.0", srcLen: 16 }),
          r(101, { dst: "0.0.0.0", dstLen: 0 }),
          r(102, { text: "102: from all fwmark 0x1 lookup 400" }),
        ],
        [r(103, { dst: "fd00:10:96::", dstLen: 108 })], // no IPv6 Service IP on this node
      ),
    }),
    new Map(),
    NOW,
  );
  t.notOk(j.findings.some((x) => x.id === ID));
  t.equal(j.verdict, "ready");
});

t.test("rules unread: nothing said here, the probe's failure makes the scan incomplete", async (t) => {
  const j = judge(
    ipvsNode({ ipRules: null }),
    new Map([["ip-rules", { kind: "not-permitted" as const, message: "ip: Operation not permitted" }]]),
    NOW,
  );
  t.notOk(j.findings.some((x) => x.id === ID));
  t.ok(j.findings.some((x) => x.id === "scan-incomplete"));
  t.not(j.verdict, "ready");
});

t.test("only kube-proxy's own answer of ipvs", async (t) => {
  const f = ipvsNode({ ipRules: rules([r(100, { src: "10.96.0.0", srcLen: 12 })]) });
  t.ok(finding(f));
  t.notOk(finding({ ...f, proxyMode: null }));
  t.notOk(finding({ ...f, proxyMode: { mode: "nftables" } }));
});
