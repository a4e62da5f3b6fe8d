import { stat } from "node:fs/promises";
import { isKubeProxyIpset } from "../facts/owners.js";
import {
  parseIpPortMembers,
  parseIpsetTerse,
  parseNodePortMembers,
  parsePortMembers,
} from "../parse/ipset-list.js";
import type { IpsetFacts } from "../facts/ipvs.js";
import { ipvsGatedRead, type Read } from "./gated-read.js";
import { defineProbe, type ProbeContext } from "./types.js";

const ARGS = ["list", "-terse"] as const;
const MAX_BYTES = 16 * 1024 * 1024;

/**
 * Whether the kernel has ip_set, from <sys>/module/ip_set: present when the module is loaded, and
 * also when it is built in (it has a max_sets parameter, so sysfs lists it either way).
 */
export async function ipSetInKernel(sysRoot: string): Promise<boolean | "unknown"> {
  try {
    await stat(`${sysRoot}/module/ip_set`);
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR") return "unknown";
    try {
      await stat(`${sysRoot}/module`);
      return false;
    } catch {
      return "unknown"; // no sysfs to ask: let ipset answer
    }
  }
}

// ipvs mode keeps every NodePort in these (pkg/proxy/ipvs/ipset.go: KUBE-NODE-PORT-TCP/-UDP/-SCTP-HASH and
// their -LOCAL- twins; KUBE-6- for IPv6): the node's own answer to "which ports are NodePorts", whatever
// --service-node-port-range the API server uses.
const NODE_PORT_SET = /^KUBE-(6-)?NODE-PORT-/;

/** The NodePorts in kube-proxy's KUBE-NODE-PORT-* sets; null when one of them could not be listed. */
async function nodePorts(
  ctx: ProbeContext,
  sets: { name: string; entries: number; kubeProxy: boolean }[],
): Promise<string[] | null> {
  const out = new Set<string>();
  for (const s of sets.filter((x) => x.kubeProxy && x.entries > 0 && NODE_PORT_SET.test(x.name))) {
    const r = await ctx.tools.run("ipset", ["list", s.name], {
      timeoutMs: ctx.callTimeoutMs,
      maxBytes: MAX_BYTES,
    });
    if (!r.ok) return null;
    const p = parseNodePortMembers(r.stdout, s.name);
    if (!p.ok) return null;
    for (const n of p.value) out.add(n);
  }
  return [...out].sort();
}

// ipvs mode's healthCheckNodePorts (pkg/proxy/ipvs/proxier.go kubeHealthCheckNodePortSet): the node's own
// answer to "which ports does kube-proxy's service health server listen on", without its process.
const HEALTH_CHECK_SET = /^KUBE-(6-)?HEALTH-CHECK-NODE-PORT$/;

/** The ports in KUBE-HEALTH-CHECK-NODE-PORT (and its KUBE-6- twin); null when one could not be listed. */
async function healthCheckNodePorts(
  ctx: ProbeContext,
  sets: { name: string; entries: number }[],
): Promise<number[] | null> {
  const out = new Set<number>();
  for (const s of sets.filter((x) => x.entries > 0 && HEALTH_CHECK_SET.test(x.name))) {
    const r = await ctx.tools.run("ipset", ["list", s.name], {
      timeoutMs: ctx.callTimeoutMs,
      maxBytes: MAX_BYTES,
    });
    if (!r.ok) return null;
    const p = parsePortMembers(r.stdout, s.name);
    if (!p.ok) return null;
    for (const n of p.value) out.add(n);
  }
  return [...out].sort((a, b) => a - b);
}

// ipvs mode's externalTrafficPolicy: Local destinations (pkg/proxy/ipvs/ipset.go kubeLoadBalancerLocalSet,
// kubeExternalIPLocalSet, kubeNodePortLocalSet*): where in-cluster callers stay on this node's endpoints.
const ETP_LOCAL_ADDRESS_SET = /^KUBE-(6-)?(LOAD-BALANCER-LOCAL|EXTERNAL-IP-LOCAL)$/;
const ETP_LOCAL_NODE_PORT_SET = /^KUBE-(6-)?NODE-PORT-LOCAL-/;

/** The ETP Local destinations in those sets; null when one holding entries could not be listed. */
async function etpLocal(
  ctx: ProbeContext,
  sets: { name: string; entries: number; kubeProxy: boolean }[],
): Promise<{ addresses: string[]; nodePorts: string[] } | null> {
  const addresses = new Set<string>();
  const nodePorts = new Set<string>();
  for (const s of sets.filter((x) => x.kubeProxy && x.entries > 0)) {
    const byAddress = ETP_LOCAL_ADDRESS_SET.test(s.name);
    if (!byAddress && !ETP_LOCAL_NODE_PORT_SET.test(s.name)) continue;
    const r = await ctx.tools.run("ipset", ["list", s.name], {
      timeoutMs: ctx.callTimeoutMs,
      maxBytes: MAX_BYTES,
    });
    if (!r.ok) return null;
    const p = byAddress ? parseIpPortMembers(r.stdout, s.name) : parseNodePortMembers(r.stdout, s.name);
    if (!p.ok) return null;
    for (const n of p.value) (byAddress ? addresses : nodePorts).add(n);
  }
  return { addresses: [...addresses].sort(), nodePorts: [...nodePorts].sort() };
}

// Every ipset with its header only (`-terse`: no members, which can be 100,000 lines), each marked
// when its name is one of kube-proxy's ipvs-mode sets. Not run when ip_set is absent: listing would
// make the kernel load the module.
export const ipsetsProbe = defineProbe("ipsets", {
  typedByParser: true,
  async run(ctx) {
    // The headers are the gate's fingerprint; the members of the NodePort sets are the deep part,
    // reused in serve while the ipvs-mode gate stands still (gated-read.ts).
    const r = await ipvsGatedRead(ctx, "ipsets", () => readIpsets(ctx));
    return r.ok ? { ok: true, facts: r.value } : r;
  },
});

async function readIpsets(ctx: ProbeContext): Promise<Read<IpsetFacts>> {
  if ((await ipSetInKernel(ctx.sysRoot)) === false) {
    return { ok: true, value: { available: false, sets: [] } };
  }
  // The gate listed the headers at the start of this scan: the same answer, not a second fork.
  let text = ctx.shared?.ipsetTerse ?? null;
  if (text === null) {
    const r = await ctx.tools.run("ipset", ARGS, { timeoutMs: ctx.callTimeoutMs, maxBytes: MAX_BYTES });
    if (!r.ok) return r;
    text = r.stdout;
  }
  const p = parseIpsetTerse(text);
  if (!p.ok) {
    return { ok: false, error: { kind: "garbage", message: p.error, command: `ipset ${ARGS.join(" ")}` } };
  }
  const sets = p.value.map((s) => ({
    name: s.name,
    type: s.type,
    family: s.family,
    entries: s.entries,
    references: s.references,
    kubeProxy: isKubeProxyIpset(s.name),
  }));
  return {
    ok: true,
    value: {
      available: true,
      sets,
      nodePorts: await nodePorts(ctx, sets),
      healthCheckNodePorts: await healthCheckNodePorts(ctx, sets),
      etpLocal: await etpLocal(ctx, sets),
    },
  };
}
