import t from "tap";
import { planCleanup } from "../../../agent/cleanup/plan.js";
import { vsKey } from "../../../agent/parse/ipvs-proc.js";
import { configz } from "../../helpers/facts.js";
import { addresses } from "../../helpers/rules.js";
import { recordedConnFacts, recordedConnNode } from "../../helpers/recorded-conn-node.js";
import { reportOf } from "../../helpers/reports.js";

// The cleanup plan's steps that clear IPVS name the live connections they cut: the recorded node of
// test/fixtures/ipvs/conn/live, moved to iptables mode, without its keepalived-style VIP (so every
// virtual server left is kube-proxy's and --clear is planned).
function plan(over = {}) {
  const rec = recordedConnFacts();
  const own = rec.ipvs!.virtualServers.filter((v) => v.address !== "192.168.50.100");
  const facts = recordedConnNode({
    proxyMode: { mode: "iptables" },
    configz: configz({ mode: "iptables" }),
    ipvs: { ...rec.ipvs!, virtualServers: own, virtualServerCount: own.length },
    addresses: addresses("172.18.0.10"),
    ...over,
  });
  return planCleanup(reportOf(facts), [], {
    strictArp: false,
    ipvsEvidence: {
      read: true,
      forwards: new Map(own.map((v) => [vsKey(v), ["Masq"]])),
      // What kube-proxy records for its Services (the proof cleanup needs before it deletes one): every
      // virtual server's address,proto:port in its Service set, the NodePort in its port set.
      sets: new Map([
        ["KUBE-NODE-PORT-TCP", new Set(["30080"])],
        ["KUBE-CLUSTER-IP", new Set(own.map((v) => `${v.address},${v.protocol.toLowerCase()}:${v.port}`))],
        ["KUBE-6-CLUSTER-IP", new Set(own.map((v) => `${v.address},${v.protocol.toLowerCase()}:${v.port}`))],
      ]),
    },
  });
}

t.test("--clear and the link deletion say how many established connections they cut", async (t) => {
  const p = plan();
  const clear = p.actions.find((a) => a.step === "ipvs-clear");
  const link = p.actions.find((a) => a.step === "link-delete");
  t.match(clear?.target, /7 established connections through them would be cut/);
  t.match(link?.target, /5 established connections to its Service IPs would be cut/);
});

t.test("connections not read: said, never 0", async (t) => {
  const p = plan({ ipvsConnections: null });
  t.match(p.actions.find((a) => a.step === "ipvs-clear")?.target, /connections through them not read/);
});
