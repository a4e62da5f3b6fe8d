import t from "tap";
import { NodeReport } from "../../../agent/report/schema.js";
import { movedWithBlackHole, reportOf } from "../../helpers/reports.js";

// A 10,000-Service ipvs node lists every Service IP on kube-ipvs0, and `ip addr show` lists them
// again under the node's interfaces: the report cuts both lists (counts stay exact in `truncated`),
// while the rules still judge the whole list.
t.test("a long address list on any interface is cut in the report, not in the judgement", async (t) => {
  const ips = Array.from({ length: 5000 }, (_, i) => ({
    family: "inet" as const,
    address: `10.96.${i >> 8}.${i & 255}`,
    prefixLen: 32,
    scope: "global",
  }));
  const base = movedWithBlackHole();
  const facts = {
    ...base,
    addresses: {
      interfaces: [
        {
          name: "eth0",
          kind: null,
          operState: "UP",
          addresses: [{ ...ips[0]!, address: "172.18.0.10", prefixLen: 16 }],
        },
        { name: "kube-ipvs0", kind: "dummy", operState: "DOWN", addresses: ips },
      ],
      primary: { ipv4: "172.18.0.10", ipv6: null, source: "default-route" as const },
    },
    kubeIpvs0: { ...base.kubeIpvs0!, addresses: ips.map(({ scope: _s, ...a }) => a) },
  };
  const r = reportOf(facts);
  t.ok(NodeReport.safeParse(r).success, "still a valid NodeReport");
  const ifs = r.facts.addresses!.interfaces;
  t.equal(ifs.find((i) => i.name === "kube-ipvs0")!.addresses.length, 1024);
  t.equal(ifs.find((i) => i.name === "eth0")!.addresses.length, 1, "short lists untouched");
  t.same(r.truncated, {
    "facts.addresses.interfaces.kube-ipvs0.addresses": 5000,
    "facts.kubeIpvs0.addresses": 5000,
  });
  const hole = r.findings.find((f) => /black/i.test(f.id));
  t.ok(hole, "the black hole is still found");
  t.match(JSON.stringify(hole?.evidence ?? {}), /5000/, "judged on all 5,000 addresses");
  t.ok(JSON.stringify(r).length < 250_000, "the report stays small");
});
