import t from "tap";
import { configz } from "../../../helpers/facts.js";
import { judge, NOW } from "../../../helpers/rules.js";
import { recordedConnNode } from "../../../helpers/recorded-conn-node.js";

// The leftover remedies that clear IPVS say how many live connections they would cut: a node moved to
// iptables mode (kube-proxy switching there does not clean ipvs state) with the recorded connections of
// test/fixtures/ipvs/conn/live still flowing through the old table.
const moved = (over = {}) =>
  recordedConnNode({ proxyMode: { mode: "iptables" }, configz: configz({ mode: "iptables" }), ...over });
const remedy = (j: ReturnType<typeof judge>, id: string) => j.findings.find((f) => f.id === id)?.remedy ?? "";

t.test("ipvs-virtual-servers-left: clearing IPVS cuts every connection through it", async (t) => {
  const j = judge(moved(), new Map(), NOW);
  // All 8 established, the keepalived-style VIP's among them: --clear takes every virtual server.
  t.match(remedy(j, "ipvs-virtual-servers-left"), /cuts 8 established connections/);
});

t.test("kube-ipvs0-left: deleting the link cuts the connections to the Service IPs on it", async (t) => {
  const j = judge(moved(), new Map(), NOW);
  // 3 + 1 + 1 to 10.96.143.30, 10.96.143.31 and fd00:10:96::1e; the NodePort's and the VIP's are not on it.
  t.match(remedy(j, "kube-ipvs0-left"), /cuts 5 established connections/);
});

t.test("connections not read: the remedy says so and how to look, never 'none'", async (t) => {
  const j = judge(
    moved({ ipvsConnections: null }),
    new Map([["ipvs-connections", { kind: "io" as const, message: "/proc/net/ip_vs_conn: EIO" }]]),
    NOW,
  );
  for (const id of ["ipvs-virtual-servers-left", "kube-ipvs0-left"]) {
    t.match(remedy(j, id), /connections through it were not read \(ipvsadm -L -n -c shows them\)/, id);
    t.notMatch(remedy(j, id), /cuts 0/, id);
  }
});
