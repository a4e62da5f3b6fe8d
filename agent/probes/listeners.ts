import type { IpsetFacts } from "../facts/ipvs.js";
import type { ListenersFacts } from "../facts/listeners.js";
import { conntrackTo, holdersOf, listeningSockets, socketsByProcess } from "../io/proc-sockets.js";
import { canonicalIp, covers, hostPort } from "../parse/listen-address.js";
import { conntrackCounter, defineProbe } from "./types.js";

/** Over this, /proc/net/nf_conntrack is not read (about 500,000 entries): unknown, never a partial count. */
export const CONNTRACK_MAX_BYTES = 128 * 1024 * 1024;

/** The URL's address in canonical text, or null for a host name (or no URL). */
function hostOf(url: string): string | null {
  try {
    return canonicalIp(new URL(url).hostname);
  } catch {
    return null;
  }
}

function portOf(url: string): number | null {
  try {
    const u = new URL(url);
    return Number(u.port || (u.protocol === "https:" ? 443 : 80));
  } catch {
    return null;
  }
}

/**
 * kube-proxy's service health server listens on every address unless nodePortAddresses restricts it
 * (kubernetes/kubernetes pkg/proxy/healthcheck/service_health.go newServiceHealthServer), so what
 * nftables mode's default `primary` takes away shows in the node's sockets and its conntrack table.
 */
interface ListenersOptions {
  /** kube-proxy's metrics and health addresses: the sockets that tell its process. */
  metricsUrl: string;
  healthUrl: string;
}

export const listenersProbe = defineProbe("listeners", {
  // It reads only the ipsets; the rest of service-conntrack's needs put it in that probe's wave, so the
  // two share one read of nf_conntrack.
  needs: ["ipsets", "addresses", "kube-proxy-configz", "kube-ipvs0", "ipvs"],
  readsConntrack: true,
  async run(ctx, opts: ListenersOptions) {
    const sockets = await listeningSockets(ctx.procRoot);
    if (!sockets.ok) return { ok: false, error: sockets.error };
    const metricsPort = portOf(opts.metricsUrl);
    const healthPort = portOf(opts.healthUrl);
    const metricsHost = hostOf(opts.metricsUrl);
    // The sockets a connection to the metrics URL may land on (a host name: any address on its port).
    const anchors = sockets.value.filter(
      (s) => s.port === metricsPort && (metricsHost === null || covers(s, metricsHost)),
    );
    const at = metricsHost === null ? `port ${metricsPort}` : hostPort(metricsHost, metricsPort ?? 0);
    let held: Set<string> | null = null;
    let kubeProxyProcess: ListenersFacts["kubeProxyProcess"];
    if (anchors.length === 0) {
      kubeProxyProcess = { traced: false, why: `nothing listens on kube-proxy's metrics address ${at}` };
    } else {
      const s = await socketsByProcess(ctx.procRoot);
      const pids = s.ok
        ? [...new Set(anchors.flatMap((a) => holdersOf(s.value, a.inode)))].sort((a, b) => a - b)
        : [];
      if (s.ok && pids.length === 1) {
        held = s.value.held.get(pids[0]!)!;
        kubeProxyProcess = { traced: true, pid: pids[0]! };
      } else
        kubeProxyProcess = {
          traced: false,
          why: !s.ok
            ? s.why
            : pids.length > 1
              ? `several processes hold sockets kube-proxy's metrics address ${at} may reach (pids ${pids.join(", ")}): which one answers is not known`
              : `no process this agent can see holds the socket on ${at} (${s.value.visible} processes visible, ${s.value.unreadable} of them unreadable; the DaemonSet runs without the host's PID namespace)`,
        };
    }
    const tcp = sockets.value.map((s) => ({
      family: s.family,
      address: s.address,
      port: s.port,
      kubeProxy: held === null ? null : held.has(s.inode),
    }));

    const prior = ctx.prior.ipsets;
    const ipsets = prior?.ok ? (prior.facts as IpsetFacts) : null;
    const fromSet = ipsets !== null && hasHealthCheckSet(ipsets) ? ipsets.healthCheckNodePorts : null;
    let healthCheckPorts: ListenersFacts["healthCheckPorts"];
    if (fromSet !== null && fromSet !== undefined) {
      healthCheckPorts = { known: true, ports: fromSet, source: "ipset" };
    } else if (held !== null) {
      // Outside ipvs mode (no set): what kube-proxy listens on besides its own endpoints. Releases that
      // still held NodePort sockets open would show those too; the rule reads this only without the set.
      const own = new Set([metricsPort, healthPort]);
      const ports = [...new Set(tcp.filter((s) => s.kubeProxy && !own.has(s.port)).map((s) => s.port))];
      healthCheckPorts = { known: true, ports: ports.sort((a, b) => a - b), source: "kube-proxy-sockets" };
    } else {
      healthCheckPorts = {
        known: false,
        why: `neither ipvs mode's KUBE-HEALTH-CHECK-NODE-PORT set nor kube-proxy's process could be read (${kubeProxyProcess.traced ? "" : kubeProxyProcess.why})`,
      };
    }

    let conntrack: ListenersFacts["conntrack"];
    if (!healthCheckPorts.known || healthCheckPorts.ports.length === 0) {
      conntrack = { read: false, why: "no health-check NodePort to count connections to" };
    } else {
      const c = await conntrackTo(
        new Set(healthCheckPorts.ports),
        conntrackCounter(ctx, "listeners", CONNTRACK_MAX_BYTES),
      );
      conntrack = c.ok
        ? { read: true, to: [...c.value.values()] }
        : { read: false, why: `${c.error.kind}: ${c.error.message}` };
    }
    return { ok: true, facts: { tcp, kubeProxyProcess, healthCheckPorts, conntrack } };
  },
});

/** The set exists only where ipvs mode made it: elsewhere an empty list from it would say nothing. */
function hasHealthCheckSet(f: IpsetFacts): boolean {
  return f.sets.some((s) => /^KUBE-(6-)?HEALTH-CHECK-NODE-PORT$/.test(s.name));
}
