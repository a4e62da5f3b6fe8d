import {
  SNAPSHOT_FORMAT,
  type IpvsSnapshot,
  type ParityCounts,
  type ServiceParity,
  type SnapshotVirtualServer,
} from "../facts/parity.js";
import type { RealServer, VirtualServer } from "../facts/ipvs.js";
import { endpointText, type NftServed } from "./nft-services.js";

// The pure half of parity: which IPVS virtual servers are kube-proxy's (the snapshot), and how they
// compare with what the nftables tables serve after the switch.

const CUT = 10;
/** EndpointSlice's default maxEndpointsPerSlice: a Service port past it is rare, and then said to be cut. */
const AFTER_LISTED = 100;

export interface SnapshotInput {
  node: string;
  takenAt: number;
  virtualServers: readonly (VirtualServer & { reals: readonly RealServer[] })[];
  /** kube-ipvs0's addresses: ipvs mode binds every ClusterIP, ExternalIP and LoadBalancer IP there. */
  serviceIPs: ReadonlySet<string>;
  /** "TCP:30080" from the KUBE-NODE-PORT-* ipsets: the NodePorts ipvs mode serves. */
  nodePorts: ReadonlySet<string>;
  /**
   * The Service IPs off-node clients reach only through the node's ARP answer from kube-ipvs0
   * (service-ips-answered-by-arp's test), or why that could not be judged. Absent: not asked.
   */
  arp?: { read: true; ips: ReadonlySet<string> } | { read: false; why: string };
}

/** kube-proxy's virtual servers only: someone else's (keepalived, kube-vip, FWM) are not Services. */
export function buildSnapshot(i: SnapshotInput): IpvsSnapshot {
  const out: SnapshotVirtualServer[] = [];
  for (const v of i.virtualServers) {
    if (v.protocol === "FWM" || v.address === null || v.port === null) continue;
    const kind = i.serviceIPs.has(v.address)
      ? "service-ip"
      : i.nodePorts.has(`${v.protocol}:${v.port}`)
        ? "nodeport"
        : null;
    if (kind === null) continue;
    const reals = v.reals
      .map((r) => endpointText(r.address, r.port))
      .filter((r): r is string => r !== null)
      .sort();
    const arpOnly = kind === "service-ip" && i.arp?.read === true && i.arp.ips.has(v.address);
    out.push({
      kind,
      protocol: v.protocol,
      address: v.address,
      port: v.port,
      reals,
      ...(arpOnly ? { arpOnly: true } : {}),
    });
  }
  return {
    format: SNAPSHOT_FORMAT,
    node: i.node,
    takenAt: i.takenAt,
    virtualServers: out,
    ...(i.arp?.read === false ? { arpNotRead: i.arp.why } : {}),
  };
}

interface ParityResult {
  counts: ParityCounts;
  /** Every entry not "same": missing first, then reached only by ARP, then differing, then new. */
  services: ServiceParity[];
}

interface Group {
  service: string | null;
  protocol: ServiceParity["protocol"];
  addresses: string[];
  before: Set<string>;
}

const addressText = (v: SnapshotVirtualServer) =>
  v.kind === "nodeport" ? `nodeport:${v.port}` : (endpointText(v.address, v.port) ?? v.address);

/**
 * Per Service port: present in both with the same endpoints, missing after (an address or NodePort
 * nothing serves now), endpoints differ, or new after. Endpoints are compared over the union of a
 * Service's virtual servers, since ipvs mode gives an externalTrafficPolicy: Local address only the
 * node's own endpoints while its ClusterIP has them all.
 */
export function compareParity(snapshot: IpvsSnapshot, served: NftServed): ParityResult {
  const groups = new Map<string, Group>();
  const missing: ServiceParity[] = [];
  const arpOnly: ServiceParity[] = [];
  const missingNodePorts = new Map<string, ServiceParity>();
  const seenIps = new Set<string>();
  const seenPorts = new Set<string>();
  for (const v of snapshot.virtualServers) {
    const ep = endpointText(v.address, v.port);
    const key = v.kind === "nodeport" ? `${v.protocol}:${v.port}` : `${v.protocol} ${ep}`;
    const map = v.kind === "nodeport" ? served.nodePorts : served.ips;
    (v.kind === "nodeport" ? seenPorts : seenIps).add(key);
    if (!map.has(key)) {
      // The same NodePort on every node address is one NodePort.
      if (v.kind === "nodeport") {
        const m = missingNodePorts.get(key);
        if (m) {
          for (const r of v.reals) if (!m.gone.includes(r) && m.gone.length < CUT) m.gone.push(r);
          continue;
        }
      }
      const entry: ServiceParity = {
        service: null,
        protocol: v.protocol,
        addresses: [addressText(v)],
        status: "missing-after",
        endpointsBefore: v.reals.length,
        endpointsAfter: 0,
        gone: v.reals.slice(0, CUT),
        added: [],
      };
      if (v.kind === "nodeport") missingNodePorts.set(key, entry);
      else missing.push(entry);
      continue;
    }
    const name = map.get(key) ?? null;
    // Still in service-ips, but off the node it answered only through kube-ipvs0's ARP: its own entry,
    // kept out of the Service's group so that "same" never covers it.
    if (v.arpOnly === true && v.kind === "service-ip") {
      const gk = name === null ? null : `${name} ${v.protocol}`;
      arpOnly.push({
        service: name,
        protocol: v.protocol,
        addresses: [addressText(v)],
        status: "arp-only",
        endpointsBefore: v.reals.length,
        endpointsAfter: gk === null ? 0 : (served.endpoints.get(gk)?.size ?? 0),
        gone: [],
        added: [],
      });
      continue;
    }
    const gk = name === null ? `? ${key}` : `${name} ${v.protocol}`;
    const g = groups.get(gk) ?? { service: name, protocol: v.protocol, addresses: [], before: new Set() };
    const a = addressText(v);
    if (!g.addresses.includes(a)) g.addresses.push(a);
    for (const r of v.reals) g.before.add(r);
    groups.set(gk, g);
  }

  const differ: ServiceParity[] = [];
  let same = 0;
  for (const [gk, g] of groups) {
    // An unnamed element (no chain, no comment) cannot be tied to endpoints: present, not compared.
    if (g.service === null) {
      same++;
      continue;
    }
    const after = served.endpoints.get(gk) ?? new Set<string>();
    const gone = [...g.before].filter((e) => !after.has(e)).sort();
    const added = [...after].filter((e) => !g.before.has(e)).sort();
    if (gone.length === 0 && added.length === 0) {
      same++;
      continue;
    }
    differ.push({
      service: g.service,
      protocol: g.protocol,
      addresses: g.addresses,
      status: "endpoints-differ",
      endpointsBefore: g.before.size,
      endpointsAfter: after.size,
      gone: gone.slice(0, CUT),
      added: added.slice(0, CUT),
      after: [...after].sort().slice(0, AFTER_LISTED),
    });
  }

  // New after: Service ports none of whose addresses IPVS served.
  const known = new Set([
    ...groups.keys(),
    ...arpOnly.flatMap((e) => (e.service === null ? [] : [`${e.service} ${e.protocol}`])),
  ]);
  const fresh = new Map<string, ServiceParity>();
  const addNew = (key: string, name: string | null, protocol: ServiceParity["protocol"], addr: string) => {
    const gk = name === null ? `? ${key}` : `${name} ${protocol}`;
    if (known.has(gk)) return;
    const e = fresh.get(gk);
    if (e) {
      if (!e.addresses.includes(addr)) e.addresses.push(addr);
      return;
    }
    const after = name === null ? 0 : (served.endpoints.get(gk)?.size ?? 0);
    fresh.set(gk, {
      service: name,
      protocol,
      addresses: [addr],
      status: "new-after",
      endpointsBefore: 0,
      endpointsAfter: after,
      gone: [],
      added: [],
    });
  };
  for (const [key, name] of served.ips) {
    if (seenIps.has(key)) continue;
    const [proto, addr] = key.split(" ") as [ServiceParity["protocol"], string];
    addNew(key, name, proto, addr);
  }
  for (const [key, name] of served.nodePorts) {
    if (seenPorts.has(key)) continue;
    const [proto, port] = key.split(":") as [ServiceParity["protocol"], string];
    addNew(key, name, proto, `nodeport:${port}`);
  }

  const lost = [...missing, ...missingNodePorts.values()];
  return {
    counts: {
      same,
      missingAfter: lost.length,
      endpointsDiffer: differ.length,
      newAfter: fresh.size,
      arpOnly: arpOnly.length,
    },
    services: [...lost, ...arpOnly, ...differ, ...fresh.values()],
  };
}
