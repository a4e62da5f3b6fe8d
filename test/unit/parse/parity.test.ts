import t from "tap";
import {
  SNAPSHOT_FORMAT,
  type IpvsSnapshot,
  type SnapshotVirtualServer,
} from "../../../agent/facts/parity.js";
import { emptyServed, type NftServed } from "../../../agent/parse/nft-services.js";
import { buildSnapshot, compareParity } from "../../../agent/parse/parity.js";
import { parseIpvsProc } from "../../../agent/parse/ipvs-proc.js";

const vs = (
  kind: SnapshotVirtualServer["kind"],
  address: string,
  port: number,
  reals: string[],
): SnapshotVirtualServer => ({
  kind,
  protocol: "TCP",
  address,
  port,
  reals,
});
const snap = (...v: SnapshotVirtualServer[]): IpvsSnapshot => ({
  format: SNAPSHOT_FORMAT,
  node: "n",
  takenAt: 0,
  virtualServers: v,
});
function served(
  ips: Record<string, string | null>,
  ports: Record<string, string | null>,
  eps: Record<string, string[]>,
): NftServed {
  const s = emptyServed();
  for (const [k, v] of Object.entries(ips)) s.ips.set(k, v);
  for (const [k, v] of Object.entries(ports)) s.nodePorts.set(k, v);
  for (const [k, v] of Object.entries(eps)) s.endpoints.set(k, new Set(v));
  return s;
}

t.test("same, missing after, endpoints differ, new after", async (t) => {
  const before = snap(
    vs("service-ip", "10.96.0.10", 53, ["10.244.0.2:53", "10.244.0.3:53"]),
    vs("nodeport", "192.168.1.10", 30053, ["10.244.0.2:53", "10.244.0.3:53"]),
    vs("service-ip", "10.96.0.20", 80, ["10.244.1.5:8080"]), // dropped
    vs("nodeport", "192.168.1.10", 30080, ["10.244.1.5:8080"]), // dropped, on two addresses
    vs("nodeport", "10.0.0.10", 30080, ["10.244.1.5:8080"]),
    vs("service-ip", "10.96.0.30", 443, ["10.244.2.7:8443"]), // endpoint changed
  );
  const after = served(
    {
      "TCP 10.96.0.10:53": "kube-system/dns:dns-tcp",
      "TCP 10.96.0.30:443": "web/api:https",
      "TCP 10.96.0.40:80": "web/new:http",
    },
    { "TCP:30053": "kube-system/dns:dns-tcp" },
    {
      "kube-system/dns:dns-tcp TCP": ["10.244.0.2:53", "10.244.0.3:53"],
      "web/api:https TCP": ["10.244.2.9:8443"],
      "web/new:http TCP": ["10.244.3.1:80"],
    },
  );
  const r = compareParity(before, after);
  t.same(r.counts, { same: 1, missingAfter: 2, endpointsDiffer: 1, newAfter: 1, arpOnly: 0 });
  const lost = r.services.filter((s) => s.status === "missing-after");
  t.same(
    lost.map((s) => s.addresses),
    [["10.96.0.20:80"], ["nodeport:30080"]],
    "one NodePort, however many addresses",
  );
  const d = r.services.find((s) => s.status === "endpoints-differ")!;
  t.equal(d.service, "web/api:https");
  t.same([d.gone, d.added], [["10.244.2.7:8443"], ["10.244.2.9:8443"]]);
  t.equal(r.services.find((s) => s.status === "new-after")?.service, "web/new:http");
});

t.test("externalTrafficPolicy: Local — endpoints compared over the Service's union", async (t) => {
  // ipvs: the LB IP has only this node's endpoint, the ClusterIP has both.
  const before = snap(
    vs("service-ip", "10.96.0.50", 80, ["10.244.1.1:80", "10.244.2.1:80"]),
    vs("service-ip", "203.0.113.5", 80, ["10.244.1.1:80"]),
  );
  const after = served(
    { "TCP 10.96.0.50:80": "a/lb:http", "TCP 203.0.113.5:80": "a/lb:http" },
    {},
    { "a/lb:http TCP": ["10.244.1.1:80", "10.244.2.1:80"] },
  );
  t.same(compareParity(before, after).counts, {
    same: 1,
    missingAfter: 0,
    endpointsDiffer: 0,
    newAfter: 0,
    arpOnly: 0,
  });
});

t.test(
  "an empty nftables side is all missing — which is why the probe fails rather than passing one",
  async (t) => {
    const r = compareParity(snap(vs("service-ip", "10.96.0.10", 53, [])), emptyServed());
    t.equal(r.counts.missingAfter, 1);
  },
);

t.test("the snapshot keeps kube-proxy's virtual servers only, with their real servers", async (t) => {
  const text = [
    "IP Virtual Server version 1.2.1 (size=4096)",
    "Prot LocalAddress:Port Scheduler Flags",
    "  -> RemoteAddress:Port Forward Weight ActiveConn InActConn",
    "TCP  0A60000A:0035 rr",
    "  -> 0AF40002:0035      Masq    1      0          0",
    "TCP  C0A8010A:7788 rr",
    "  -> 0AF40002:0035      Masq    1      0          0",
    "TCP  C0A80164:0050 wrr", // keepalived's VIP: not a Service
    "  -> C0A80102:0050      Route   1      0          0",
    "",
  ].join("\n");
  const p = parseIpvsProc(text, { collectRealServers: true });
  if (!p.ok) return t.fail(p.error);
  const s = buildSnapshot({
    node: "n",
    takenAt: 5,
    virtualServers: p.value.virtualServers.map((v) => ({ ...v, reals: p.value.realServers?.get(v) ?? [] })),
    serviceIPs: new Set(["10.96.0.10"]),
    nodePorts: new Set(["TCP:30600"]),
  });
  t.same(s.virtualServers, [
    { kind: "service-ip", protocol: "TCP", address: "10.96.0.10", port: 53, reals: ["10.244.0.2:53"] },
    { kind: "nodeport", protocol: "TCP", address: "192.168.1.10", port: 30600, reals: ["10.244.0.2:53"] },
  ]);
});

t.test(
  "an externalIP reached off the node only by its ARP answer from kube-ipvs0: its own status",
  async (t) => {
    // 192.168.1.50 is an externalIP inside the node's 192.168.1.0/24 with arp_ignore 0: nftables mode keeps it
    // in service-ips, but nobody answers ARP for it any more, so "same" would call it served.
    const before: IpvsSnapshot = {
      ...snap(vs("service-ip", "10.96.0.60", 80, ["10.244.1.1:80"]), {
        ...vs("service-ip", "192.168.1.50", 80, ["10.244.1.1:80"]),
        arpOnly: true,
      }),
    };
    const after = served(
      { "TCP 10.96.0.60:80": "web/ext:http", "TCP 192.168.1.50:80": "web/ext:http" },
      {},
      { "web/ext:http TCP": ["10.244.1.1:80"] },
    );
    const r = compareParity(before, after);
    t.same(r.counts, { same: 1, missingAfter: 0, endpointsDiffer: 0, newAfter: 0, arpOnly: 1 });
    t.same(
      r.services.map((s) => [s.status, s.service, s.addresses]),
      [["arp-only", "web/ext:http", ["192.168.1.50:80"]]],
    );
    // Gone from the maps too: lost, which says more than "ARP only".
    const lost = compareParity(
      before,
      served({ "TCP 10.96.0.60:80": "web/ext:http" }, {}, { "web/ext:http TCP": ["10.244.1.1:80"] }),
    );
    t.same(
      lost.services.map((s) => [s.status, s.addresses]),
      [["missing-after", ["192.168.1.50:80"]]],
    );
  },
);

t.test("the snapshot marks the Service IPs reached only by ARP, or says it could not tell", async (t) => {
  const p = parseIpvsProc(
    [
      "IP Virtual Server version 1.2.1 (size=4096)",
      "Prot LocalAddress:Port Scheduler Flags",
      "  -> RemoteAddress:Port Forward Weight ActiveConn InActConn",
      "TCP  0A60000A:0050 rr",
      "  -> 0AF40002:0050      Masq    1      0          0",
      "TCP  C0A80132:0050 rr",
      "  -> 0AF40002:0050      Masq    1      0          0",
      "",
    ].join("\n"),
    { collectRealServers: true },
  );
  if (!p.ok) return t.fail(p.error);
  const input = {
    node: "n",
    takenAt: 5,
    virtualServers: p.value.virtualServers.map((v) => ({ ...v, reals: p.value.realServers?.get(v) ?? [] })),
    serviceIPs: new Set(["10.96.0.10", "192.168.1.50"]),
    nodePorts: new Set<string>(),
  };
  const s = buildSnapshot({ ...input, arp: { read: true, ips: new Set(["192.168.1.50"]) } });
  t.same(
    s.virtualServers.map((v) => [v.address, v.arpOnly ?? false]),
    [
      ["10.96.0.10", false],
      ["192.168.1.50", true],
    ],
  );
  t.equal(s.arpNotRead, undefined);
  const u = buildSnapshot({ ...input, arp: { read: false, why: "the sysctls were not read" } });
  t.equal(u.arpNotRead, "the sysctls were not read");
  t.notOk(u.virtualServers.some((v) => v.arpOnly));
});
