import type { IpsetFacts } from "../facts/ipvs.js";
import { isKubeProxyChainOwner } from "../facts/owners.js";
import type { IptablesBackendFacts, IptablesBackendRead, IptablesBackendUnread } from "../facts/netfilter.js";
import type { NodeFacts } from "../report/schema.js";

// What of the node's netfilter state is kube-proxy's, counted once from the owners the probes recorded
// (facts/owners.ts decides them). null: the probe did not read that part, which is never "none".

/** One backend's kube-proxy chains, or why they are unknown (never an empty list). */
export type BackendChains =
  | {
      backend: IptablesBackendFacts["backend"];
      family: IptablesBackendFacts["family"];
      read: true;
      /** kube-proxy's KUBE-* chains listed one by one (kubelet's and unknown ones excluded). */
      chains: IptablesBackendRead["kubeChains"];
      /** Per-Service chains (KUBE-SVC-*, KUBE-SEP-*, ...), counted, all iptables mode's. */
      perService: number;
    }
  | IptablesBackendUnread;

export function kubeProxyIpsets(f: Pick<NodeFacts, "ipsets">): IpsetFacts["sets"] | null {
  return f.ipsets ? f.ipsets.sets.filter((s) => s.kubeProxy) : null;
}

export function kubeProxyChains(f: Pick<NodeFacts, "iptables">): BackendChains[] | null {
  if (!f.iptables) return null;
  return f.iptables.backends.map((b) =>
    !b.read
      ? b
      : {
          backend: b.backend,
          family: b.family,
          read: true,
          chains: b.kubeChains.filter((c) => isKubeProxyChainOwner(c.owner)),
          perService: Object.values(b.patternCounts).reduce((a, n) => a + n, 0),
        },
  );
}
