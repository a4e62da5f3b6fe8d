import { readFileSync } from "node:fs";
import { SNAPSHOT_FORMAT, type IpvsSnapshot, type SnapshotVirtualServer } from "../../agent/facts/parity.js";
import { addNftChains, addNftMaps, emptyServed } from "../../agent/parse/nft-services.js";

// A "before the switch" IPVS snapshot for tests that surface parity (fleet report, fault matrix) rather
// than test the comparison itself (that is test/kernel/parity-uml-netns.test.ts, with real IPVS in UML).
// It is what the recorded kube-proxy 1.34 ruleset serves (test/fixtures/netfilter/recorded/
// nftables-ipvs-leftovers, read by the agent's own parser), plus one Service IP that nothing serves
// after and one endpoint moved: so a comparison against the same recording finds exactly those.

const REC = new URL("../fixtures/netfilter/recorded/nftables-ipvs-leftovers/", import.meta.url).pathname;
const MAPS = ["service-ips", "service-nodeports", "no-endpoint-services", "no-endpoint-nodeports"];

/** The parity probe's nft reads and the recorded answer to each (the ip6 family holds no kube-proxy table). */
export const PARITY_NFT_ANSWERS: Record<string, string> = {
  "-j list chains ip": `${REC}nft-list-chains-ip.json`,
  "-j list chains ip6": `${REC}nft-list-chains-ip6.json`,
  ...Object.fromEntries(
    MAPS.map((m) => [`-j list map ip kube-proxy ${m}`, `${REC}nft-list-map-ip-kube-proxy-${m}.json`]),
  ),
};

export const LOST_ADDRESS = "172.30.0.99";

export function snapshotOfRecording(node: string, takenAt: number): IpvsSnapshot {
  const served = emptyServed();
  const ok = (r: { ok: boolean }) => {
    if (!r.ok) throw new Error("the recorded nft output did not parse");
  };
  ok(addNftChains(served, readFileSync(PARITY_NFT_ANSWERS["-j list chains ip"]!, "utf8"), "kube-proxy"));
  for (const m of MAPS)
    ok(
      addNftMaps(
        served,
        readFileSync(PARITY_NFT_ANSWERS[`-j list map ip kube-proxy ${m}`]!, "utf8"),
        "kube-proxy",
      ),
    );
  const vs: SnapshotVirtualServer[] = [];
  let moved = false;
  for (const [key, name] of served.ips) {
    const m = /^(TCP|UDP|SCTP) (\d+\.\d+\.\d+\.\d+):(\d+)$/.exec(key);
    if (!m) continue;
    const protocol = m[1] as SnapshotVirtualServer["protocol"];
    let reals = name === null ? [] : [...(served.endpoints.get(`${name} ${protocol}`) ?? [])].sort();
    // One endpoint moved between the snapshot and now: IPVS had another one.
    if (!moved && reals.length > 0) {
      reals = ["10.180.9.9:80", ...reals.slice(1)];
      moved = true;
    }
    vs.push({ kind: "service-ip", protocol, address: m[2]!, port: Number(m[3]), reals });
  }
  if (!moved) throw new Error("no Service with endpoints in the recording");
  vs.push({
    kind: "service-ip",
    protocol: "TCP",
    address: LOST_ADDRESS,
    port: 80,
    reals: ["10.180.0.99:80"],
  });
  return { format: SNAPSHOT_FORMAT, node, takenAt, virtualServers: vs };
}
