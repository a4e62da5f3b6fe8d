import t from "tap";
import { judge, nftNode, NOW } from "../../../helpers/rules.js";
import { iptablesBackend } from "../../../helpers/facts.js";
import type { NodeFacts } from "../../../../agent/report/schema.js";

// After the switch nftables mode DNATs in prerouting (pkg/proxy/nftables/proxier.go v1.34.4,
// nftablesBaseChains: nat-prerouting at dstnat priority) and accepts nothing in forward, so a FORWARD
// policy DROP no plugin covers drops new flows to endpoints on other nodes. An error while kube-proxy
// programs Services with endpoints (it is happening now); a warning while it programs none.

const table = (family: "ip" | "ip6", endpoint: number) => ({
  family,
  name: "kube-proxy",
  sets: [],
  chains: { total: 20, service: endpoint, endpoint, external: 0, base: [] },
});
const node = (endpoints: number, forwardJumps: string[]): NodeFacts =>
  nftNode({
    iptables: {
      backends: [
        iptablesBackend({
          policies: { "filter/FORWARD": "DROP" },
          dockerChains: ["DOCKER", "DOCKER-USER", "DOCKER-FORWARD"],
          forwardJumps,
        }),
      ],
    },
    nftables: {
      tables: [
        { family: "ip", name: "kube-proxy", owner: "kube-proxy" },
        { family: "ip6", name: "kube-proxy", owner: "kube-proxy" },
      ],
      kubeProxyTableName: "kube-proxy",
      kubeProxy: [table("ip", endpoints), table("ip6", 0)],
      firewalls: [],
    },
  });
const finding = (f: NodeFacts) =>
  judge(f, new Map(), NOW).findings.find((x) => x.id === "forward-drop-after-switch");

t.test("kube-proxy programs Services, FORWARD drops what no plugin accepts: an error", async (t) => {
  const f = finding(node(3, ["DOCKER-USER", "DOCKER-FORWARD"]));
  t.equal(f?.severity, "error");
  t.equal(f?.stage, "after");
  t.match(f?.evidence.drops, [/^ipv4 nft filter\/FORWARD policy DROP \(Docker's/]);
});

t.test("no Service with endpoints programmed yet: a warning", async (t) => {
  t.equal(finding(node(0, []))?.severity, "warning");
});

t.test("Flannel accepts the pod network: silent", async (t) => {
  t.notOk(finding(node(3, ["DOCKER-USER", "DOCKER-FORWARD", "FLANNEL-FWD"])));
});

t.test("before the switch, and on a guess, it is the other check's", async (t) => {
  const f = node(3, []);
  t.notOk(finding({ ...f, proxyMode: { mode: "ipvs" } }));
  t.notOk(finding({ ...f, proxyMode: null }));
});
