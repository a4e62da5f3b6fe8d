import type { IpvsPlane, NodeFacts } from "../report/schema.js";
import { kubeIpvs0ServiceIps } from "./kube-ipvs0.js";

const MAX_MISSING = 20;

/**
 * ipvs mode's data plane as a rollback must bring it back, from the whole IPVS table: virtual servers with
 * real servers, and every Service IP they serve bound on kube-ipvs0 (ipvs mode binds each ClusterIP,
 * externalIP and LoadBalancer IP there, or IPVS never sees the packet as local). A Service IP is a virtual
 * server's address held by no other interface of the node. null when a part it needs was not read.
 */
export function ipvsPlane(f: NodeFacts): IpvsPlane | null {
  if (f.ipvs === null || f.kubeIpvs0 === null || f.addresses === null) return null;
  const vs = f.ipvs.virtualServers;
  const local = new Set(
    f.addresses.interfaces
      .filter((i) => i.name !== "kube-ipvs0")
      .flatMap((i) => i.addresses.map((a) => a.address)),
  );
  const onDummy = new Set(kubeIpvs0ServiceIps(f.kubeIpvs0));
  const service = [
    ...new Set(vs.flatMap((v) => (v.address === null || local.has(v.address) ? [] : [v.address]))),
  ];
  const missing = service.filter((a) => !onDummy.has(a));
  return {
    virtualServers: f.ipvs.virtualServerCount,
    withRealServers: vs.filter((v) => v.realServers > 0).length,
    realServers: f.ipvs.realServerCount,
    serviceIPs: service.length,
    onKubeIpvs0: service.length - missing.length,
    missing: missing.slice(0, MAX_MISSING),
  };
}
