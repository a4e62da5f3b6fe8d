import t from "tap";
import { netnsAvailable, withNetns, type NetNs } from "../helpers/netns.js";
import { finding, findingIds } from "../helpers/scan-report.js";
import { scanInNetns } from "../helpers/standin.js";

// ip-rules-keyed-on-service-addresses on the host kernel: kube-ipvs0 holding a ClusterIP and an IPv6
// ClusterIP as ipvs mode binds them, real `ip rule` entries in a network namespace, kube-proxy's
// endpoints answered by the stand-in as ipvs mode, and the built agent scanning from inside.
const IPVS = { mode: "ipvs", version: "v1.33.1", lastSync: { agoSeconds: 3 }, healthy: true };
const ID = "ip-rules-keyed-on-service-addresses";

function kubeIpvs0(ns: NetNs): void {
  ns.must(["ip", "link", "set", "lo", "up"]);
  // ipvs mode makes a dummy; the host kernel here may lack the dummy driver, and the probe reads the
  // link's addresses whatever its kind, so a veth stands in for it.
  ns.must(["ip", "link", "add", "kube-ipvs0", "type", "veth", "peer", "name", "kube-ipvs0p"]);
  ns.must(["ip", "addr", "add", "10.96.0.10/32", "dev", "kube-ipvs0"]);
  ns.must(["ip", "-6", "addr", "add", "fd00:10:96::a/128", "dev", "kube-ipvs0", "nodad"]);
}

if (!netnsAvailable()) {
  t.fail("network namespaces are not available: this test needs root (CI runs as root)");
} else {
  t.test("rules from the Service CIDR and to an IPv6 ClusterIP: a warning naming both", (t) =>
    withNetns(async (ns) => {
      kubeIpvs0(ns);
      ns.must(["ip", "rule", "add", "from", "10.96.0.0/12", "lookup", "100", "priority", "100"]);
      ns.must([
        "ip",
        "rule",
        "add",
        "not",
        "to",
        "10.96.0.10",
        "fwmark",
        "0x4/0xf",
        "lookup",
        "200",
        "priority",
        "101",
      ]);
      ns.must(["ip", "-6", "rule", "add", "to", "fd00:10:96::/108", "prohibit", "priority", "102"]);
      // Not on a Service address: a pod CIDR, and a rule with no address selector at all.
      ns.must(["ip", "rule", "add", "from", "10.244.0.0/16", "lookup", "300", "priority", "103"]);
      ns.must(["ip", "rule", "add", "fwmark", "0x1", "lookup", "400", "priority", "104"]);
      const r = await scanInNetns(ns, IPVS);
      t.equal(r.phase, "ipvs");
      t.equal(r.probes.find((p) => p.name === "ip-rules")?.ok, true, "the probe read both families");
      const f = finding(r, ID);
      t.equal(f?.severity, "warning");
      t.same(f?.evidence.rules, [
        "100: from 10.96.0.0/12 lookup 100 (selects Service IPs on kube-ipvs0: 10.96.0.10)",
        "101: not from all to 10.96.0.10 fwmark 0x4/0xf lookup 200 (selects Service IPs on kube-ipvs0: 10.96.0.10)",
        "102: from all to fd00:10:96::/108 prohibit (selects Service IPs on kube-ipvs0: fd00:10:96::a)",
      ]);
      t.equal(f?.evidence.serviceIpsSelected, 2);
      t.not(r.verdict, "ready");
    }),
  );
  t.test("only the kernel's own rules: read, and nothing to say", (t) =>
    withNetns(async (ns) => {
      kubeIpvs0(ns);
      const r = await scanInNetns(ns, IPVS);
      const rules = r.facts.ipRules;
      t.same(
        rules?.families.map((f) => [f.family, f.available, f.rules.map((x) => x.text)]),
        [
          [
            "inet",
            true,
            ["0: from all lookup local", "32766: from all lookup main", "32767: from all lookup default"],
          ],
          ["inet6", true, ["0: from all lookup local", "32766: from all lookup main"]],
        ],
      );
      t.notOk(findingIds(r).includes(ID));
    }),
  );
}
