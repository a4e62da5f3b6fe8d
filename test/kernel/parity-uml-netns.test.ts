import t from "tap";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { staleBuild } from "../helpers/built.js";
import { bootUml, hostScratchDir, umlRunsHere, umlUnavailableReason } from "../helpers/uml.js";
import { netnsAvailable, withNetns } from "../helpers/netns.js";
import { emptyFacts, metrics, noKernelState } from "../helpers/facts.js";
import { judge, NOW } from "../helpers/rules.js";
import { ParityFacts } from "../../agent/facts/parity.js";

// Parity end to end on real kernels. Before: the Services of kube-proxy's own nftables test ruleset
// (pkg/proxy/nftables/proxier_test.go TestOverallNFTablesRules, test/fixtures/netfilter/sources/
// kube-proxy-nft-v1.34-ip.nft) built as ipvs mode builds them — real IPVS virtual servers, a real
// kube-ipvs0, real KUBE-NODE-PORT-TCP ipset — in User-Mode Linux, and snapshotted by the real probe.
// After: that same ruleset loaded with the real nft in a namespace on the host kernel (UML's nftables
// has no ip family), with ns3/svc3 dropped and ns1/svc1's endpoint moved from 10.180.0.1 to
// 10.180.0.9 (its endpoint chain renamed exactly as proxier.go names it). The findings name exactly those.
t.setTimeout(1_200_000);

const root = new URL("../../", import.meta.url);
const driver = fileURLToPath(new URL("test/kernel/parity-driver.mjs", root));
const ruleset = readFileSync(
  new URL("test/fixtures/netfilter/sources/kube-proxy-nft-v1.34-ip.nft", root),
  "utf8",
);

// proxier.go hashAndTruncate: base32(sha256(name))[:8] + "-" + name (RFC 4648 alphabet, as Go's StdEncoding).
function hashed(name: string): string {
  const A = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  const bytes = createHash("sha256").update(name).digest();
  let bits = 0;
  let value = 0;
  let out = "";
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5 && out.length < 8) {
      out += A[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return `${out.slice(0, 8)}-${name}`;
}

// ipvs mode for the same Services: every ClusterIP / externalIP / LoadBalancer IP on kube-ipvs0 with a
// virtual server, every NodePort on the node address (192.168.0.2, the ruleset's nodeport-ips).
const SERVICES: [string, string[], number[]][] = [
  // address(es), real servers, NodePorts
  ["172.30.0.41", ["10.180.0.1"], []],
  ["172.30.0.42 192.168.99.22 1.2.3.4", ["10.180.0.2"], [3001]],
  ["172.30.0.43", ["10.180.0.3"], [3003]],
  ["172.30.0.44 192.168.99.33", ["10.180.0.4", "10.180.0.5"], []],
  ["172.30.0.45 5.6.7.8", ["10.180.0.3"], [3002]],
  ["172.30.0.46", [], []],
];
const guestLines = [
  "set -eu",
  ". test/helpers/uml/guest-lib.sh",
  'in1() { ip netns exec node1 "$@"; }',
  "proxyscope_netns node1",
  "ip -n node1 link add eth0 type dummy",
  "ip -n node1 addr add 192.168.0.2/24 dev eth0",
  "ip -n node1 link set eth0 up",
  "ip -n node1 link add kube-ipvs0 type dummy",
  "in1 ipset create KUBE-NODE-PORT-TCP bitmap:port range 0-65535",
];
for (const [addrs, reals, nodePorts] of SERVICES) {
  for (const a of addrs.split(" ")) {
    guestLines.push(`ip -n node1 addr add ${a}/32 dev kube-ipvs0`, `in1 ipvsadm -A -t ${a}:80 -s rr`);
    for (const r of reals) guestLines.push(`in1 ipvsadm -a -t ${a}:80 -r ${r}:80 -m -w 1`);
  }
  for (const p of nodePorts) {
    guestLines.push(`in1 ipvsadm -A -t 192.168.0.2:${p} -s rr`, `in1 ipset add KUBE-NODE-PORT-TCP ${p}`);
    for (const r of reals) guestLines.push(`in1 ipvsadm -a -t 192.168.0.2:${p} -r ${r}:80 -m -w 1`);
  }
}
guestLines.push(
  'in1 node test/kernel/parity-driver.mjs ipvs "$OUT/snapshot.json" "$OUT/before.json"',
  "echo guest done",
);

// The ruleset after the switch: svc3's lines gone, svc1's endpoint replaced.
const oldEp = "endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80";
const newEp = `endpoint-${hashed("ns1/svc1/tcp/p80__10.180.0.9/80")}`;
const after = ruleset
  .split("\n")
  .filter((l) => !l.includes("ns3/svc3") && !l.includes("172.30.0.43") && !/tcp \. 3003\b/.test(l))
  .map((l) => l.replaceAll(oldEp, newEp).replaceAll("10.180.0.1", "10.180.0.9"))
  .join("\n");

const uml = umlUnavailableReason();
if (uml !== null) t.fail(`User-Mode Linux is needed for this test and does not skip silently: ${uml}`);
else if (!netnsAvailable())
  t.fail("cannot create network namespaces here (needs root); this test does not skip silently");
else if (umlRunsHere(t)) {
  t.equal(
    staleBuild(["agent/probes/parity.ts", "agent/parse/parity.ts", "agent/parse/nft-services.ts"]),
    null,
    "dist/ is built and current",
  );
  t.equal(
    hashed("ns1/svc1/tcp/p80__10.180.0.1/80"),
    oldEp.slice("endpoint-".length),
    "the hash is kube-proxy's",
  );

  const out = hostScratchDir("proxyscope-parity-");
  t.teardown(out.remove);
  const boot = await bootUml({ script: guestLines.join("\n"), env: { OUT: out.path }, timeoutMs: 900_000 });
  t.equal(boot.exitCode, 0, `guest script:\n${boot.output}`);
  const before = JSON.parse(readFileSync(`${out.path}/before.json`, "utf8"));

  t.test("ipvs mode: the real IPVS table snapshotted", async (t) => {
    t.match(before.parity, { ok: true, facts: { state: "recorded", virtualServers: 13, realServers: 14 } });
    const snap = JSON.parse(readFileSync(`${out.path}/snapshot.json`, "utf8"));
    t.same(
      snap.virtualServers
        .filter((v: { kind: string }) => v.kind === "nodeport")
        .map((v: { port: number }) => v.port)
        .sort(),
      [3001, 3002, 3003],
    );
  });

  await t.test("nftables mode: exactly the dropped Service and the changed endpoint", async (t) => {
    await withNetns(async (ns) => {
      ns.loadNft(after);
      const r = ns.runNode(driver, ["nftables", `${out.path}/snapshot.json`, `${out.path}/after.json`]);
      t.equal(r.code, 0, r.stderr);
    });
    const res = JSON.parse(readFileSync(`${out.path}/after.json`, "utf8"));
    t.ok(res.parity.ok, JSON.stringify(res.parity.error));
    const p = ParityFacts.parse(res.parity.facts);
    if (p.state !== "compared") return t.fail(p.state);
    // No Service IP of this scenario sits in an on-link prefix with arp_ignore 0: none reached by ARP only.
    t.same(p.counts, { same: 4, missingAfter: 2, endpointsDiffer: 1, newAfter: 0, arpOnly: 0 });
    const j = judge(
      emptyFacts({
        ...noKernelState,
        proxyMode: { mode: "nftables" },
        kubeProxyMetrics: metrics({}),
        parity: p,
      }),
      new Map(),
      NOW,
    );
    const lost = j.findings.find((f) => f.id === "services-lost-in-switch");
    t.equal(lost?.severity, "error");
    t.same(lost?.evidence.lost, [
      "172.30.0.43:80/TCP (1 endpoints before)",
      "nodeport:3003/TCP (1 endpoints before)",
    ]);
    const differ = j.findings.find((f) => f.id === "service-endpoints-differ-after-switch");
    t.same(differ?.evidence.services, ["ns1/svc1:p80/TCP: 1 -> 1 gone 10.180.0.1:80 new 10.180.0.9:80"]);
  });
}
