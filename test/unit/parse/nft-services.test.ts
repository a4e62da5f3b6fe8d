import t from "tap";
import { readFileSync } from "node:fs";
import {
  addNftChains,
  addNftMaps,
  emptyServed,
  endpointOfChain,
  serviceOfChain,
} from "../../../agent/parse/nft-services.js";

// Names read from what the real nft 1.0.6 printed for kube-proxy's own test rulesets loaded in a
// namespace (test/fixtures/netfilter/recorded, see its README): no rule listing is needed.
const rec = (scenario: string, file: string) =>
  readFileSync(new URL(`../../fixtures/netfilter/recorded/${scenario}/${file}`, import.meta.url), "utf8");

t.test(
  "1.34 table: every Service IP and NodePort with its Service, endpoints from chain names",
  async (t) => {
    const s = emptyServed();
    t.ok(addNftMaps(s, rec("nftables-v1.34", "nft-list-maps-ip.json"), "kube-proxy").ok);
    t.ok(addNftChains(s, rec("nftables-v1.34", "nft-list-chains.json"), "kube-proxy").ok);
    t.equal(s.ips.get("TCP 172.30.0.41:80"), "ns1/svc1:p80", "ClusterIP -> service chain");
    t.equal(s.ips.get("TCP 1.2.3.4:80"), "ns2/svc2:p80", "LoadBalancer IP -> external chain");
    // ns6/svc6 has no endpoints: only in no-endpoint-services, named by the element's comment.
    t.equal(s.ips.get("TCP 172.30.0.46:80"), "ns6/svc6:p80");
    t.equal(s.nodePorts.get("TCP:3001"), "ns2/svc2:p80");
    t.same([...(s.endpoints.get("ns4/svc4:p80 TCP") ?? [])].sort(), ["10.180.0.4:80", "10.180.0.5:80"]);
    t.notOk(s.endpoints.has("ns6/svc6:p80 TCP"));
  },
);

t.test("dual stack: IPv6 endpoints come back with their colons", async (t) => {
  const s = emptyServed();
  for (const f of ["ip", "ip6"]) {
    t.ok(addNftMaps(s, rec("nftables-pre1.34-dualstack", `nft-list-maps-${f}.json`), "kube-proxy").ok);
  }
  t.ok(addNftChains(s, rec("nftables-pre1.34-dualstack", "nft-list-chains.json"), "kube-proxy").ok);
  t.equal(s.ips.get("TCP [fd00:172:30::41]:80"), "ns1/svc1:p80");
  t.ok(s.endpoints.get("ns1/svc1:p80 TCP")?.has("[fd00:10:180::1]:80"));
});

t.test("another table name is not kube-proxy's", async (t) => {
  const s = emptyServed();
  t.ok(addNftMaps(s, rec("nftables-v1.34", "nft-list-maps-ip.json"), "kp-custom").ok);
  t.equal(s.ips.size, 0);
});

t.test("chain names, as kube-proxy's proxier.go builds them", async (t) => {
  t.same(serviceOfChain("service-ULMVA6XW-ns1/svc1/tcp/p80"), { service: "ns1/svc1:p80", protocol: "TCP" });
  t.same(serviceOfChain("external-42NFTM6N-ns2/svc2/udp/"), { service: "ns2/svc2", protocol: "UDP" });
  t.equal(serviceOfChain("service-endpoints-check"), null, "a helper chain is no Service");
  t.same(endpointOfChain("endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80"), {
    key: "ns1/svc1:p80 TCP",
    endpoint: "10.180.0.1:80",
  });
  t.same(endpointOfChain("endpoint-ABCDEFGH-ns/s/tcp/p__fd00.10.180..1/80")?.valueOf(), {
    key: "ns/s:p TCP",
    endpoint: "[fd00:10:180::1]:80",
  });
  t.equal(endpointOfChain(`endpoint-ABCDEFGH-${"n".repeat(200)}/s/tcp/p__fd00.1...`), "truncated");
});

t.test("an element not understood fails the parse: never a Service silently dropped", async (t) => {
  const bad = JSON.stringify({
    nftables: [
      {
        map: {
          family: "ip",
          table: "kube-proxy",
          name: "service-ips",
          elem: [[{ concat: ["10.0.0.1", "tcp"] }, { goto: { target: "x" } }]],
        },
      },
    ],
  });
  const r = addNftMaps(emptyServed(), bad, "kube-proxy");
  t.notOk(r.ok);
  t.notOk(addNftMaps(emptyServed(), "{not json", "kube-proxy").ok);
});
