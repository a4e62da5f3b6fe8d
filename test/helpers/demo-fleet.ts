import type { NodeReport } from "../../agent/report/schema.js";
import { profile as keepalived } from "../profiles/corpus/kubeadm-keepalived.js";
import { vs } from "./facts.js";
import { addresses } from "./rules.js";
import { report, specs } from "./review-fleet.js";

// The sample fleet `proxyscope report --demo` ships (collector/demo/*.json), made, not written by hand:
// the migration review's EKS fleet (review-fleet.ts, every node judged by the agent's own rules), cut
// to a few nodes, plus one of its ipvs nodes sharing IPVS with keepalived as the corpus profile
// kubeadm-keepalived records it (its VIP and virtual server on :30443). UPDATE_GOLDEN=1 on
// test/unit/collector/demo-samples.test.ts writes them.

/** Which review-fleet nodes the demo keeps, by address: after the switch, leftovers, ready, old kernel. */
const KEEP = ["10.20.1.17", "10.20.4.12", "10.20.3.21", "10.20.8.40", "10.20.8.141", "10.20.12.8"];

export function demoReports(): { file: string; report: NodeReport }[] {
  const all = specs().filter((s) => s.facts !== null);
  const out = KEEP.map((ip) => {
    const s = all.find((x) => x.name.startsWith(`ip-${ip.replace(/\./g, "-")}.`));
    if (!s) throw new Error(`review fleet has no node ${ip}`);
    return { file: `${s.name.split(".")[0]}.json`, report: report(s.name, s.facts!) };
  });
  // An ipvs node with keepalived's virtual server beside kube-proxy's: blocked until the VIP moves.
  const base = all.find((x) => x.name.startsWith("ip-10-20-5-30."))!;
  const kv = keepalived.nodes[0]!.state.ipvs!.find((v) => v.scheduler === "wlc")!;
  const f = structuredClone(base.facts!);
  f.ipvs!.virtualServers.push(vs(kv.address, kv.port, { scheduler: kv.scheduler, realServers: 2 }));
  f.ipvs!.virtualServerCount = f.ipvs!.virtualServers.length;
  f.addresses = addresses("10.20.5.30", [kv.address]);
  // kube-proxy's KUBE-NODE-PORT-TCP read and empty, as on the profile's node: 30443 is proven not its own.
  f.ipsets = {
    sets: [
      {
        name: "KUBE-NODE-PORT-TCP",
        type: "bitmap:port",
        family: null,
        entries: 0,
        references: 1,
        kubeProxy: true,
      },
    ],
    nodePorts: [],
  };
  out.push({ file: "ip-10-20-5-30.json", report: report(base.name, f) });
  return out.sort((a, b) => a.file.localeCompare(b.file));
}
