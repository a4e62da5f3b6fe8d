import {
  defaultRouteSource,
  ipAddrInterfaces,
  jsonArrayDoc,
  parseIpRouteJson,
  type Interface,
} from "../parse/ip-json.js";
import type { KubeIpvs0Facts } from "../facts/ipvs.js";
import { kubeIpvs0FromAddrDoc, kubeIpvs0FromAddrListing } from "../parse/kube-ipvs0.js";
import { ipvsGatedRead, type Read } from "./gated-read.js";
import { defineProbe, type ProbeContext, type ProbeOutcome } from "./types.js";
import type { Result } from "../../common/result.js";

const MAX_BYTES = 32 * 1024 * 1024;

// Every local address (NodePorts answer on all of them in ipvs/iptables mode) and the primary ones
// (all that nftables mode's default `nodePortAddresses: primary` keeps).
interface AddressesOptions {
  /** The node's primary addresses when the downward API gave them (status.hostIPs, --node-ip). */
  nodeIPs: readonly string[];
}

export const addressesProbe = defineProbe("addresses", {
  typedByParser: true,
  async run(ctx, opts: AddressesOptions) {
    // kube-ipvs0 holds every Service IP: at 10,000 Services this listing is 2 MB of JSON, reused in
    // serve while the ipvs-mode gate stands still (gated-read.ts).
    const read = await ipvsGatedRead(ctx, "addresses", () => readListing(ctx));
    if (!read.ok) return read;
    const { kubeIpvs0, interfaces } = read.value;
    if (ctx.shared) ctx.shared.kubeIpvs0 = kubeIpvs0; // kube-ipvs0's probe takes its link from here

    if (opts.nodeIPs.length > 0) {
      const ipv4 = opts.nodeIPs.find((ip) => !ip.includes(":")) ?? null;
      const ipv6 = opts.nodeIPs.find((ip) => ip.includes(":")) ?? null;
      return { ok: true, facts: { interfaces, primary: { ipv4, ipv6, source: "config" } } };
    }

    const sources: (string | null)[] = [];
    for (const [args, family] of [
      [["-j", "route", "show", "default"], "inet"],
      [["-j", "-6", "route", "show", "default"], "inet6"],
    ] as const) {
      const out = await runIp(ctx, args);
      if (!out.ok) return out;
      const routes = parseIpRouteJson(out.facts);
      if (!routes.ok) return garbage(routes.error, `ip ${args.join(" ")}`);
      sources.push(defaultRouteSource(routes.value, interfaces, family));
    }
    const [ipv4 = null, ipv6 = null] = sources;
    const source = ipv4 !== null || ipv6 !== null ? "default-route" : "none";
    return { ok: true, facts: { interfaces, primary: { ipv4, ipv6, source } } };
  },
});

// kube-ipvs0's facts are taken from the listing here, once a read: a reused read keeps them, not the
// 2 MB of JSON (at 10,000 Services) they were parsed from.
async function readListing(
  ctx: ProbeContext,
): Promise<Read<{ interfaces: Interface[]; kubeIpvs0: Result<KubeIpvs0Facts> }>> {
  const addr = await runIp(ctx, ["-j", "-d", "addr", "show"]);
  if (!addr.ok) return addr;
  // One JSON parse for both (2 MB at 10,000 Services); blank output stays kube-ipvs0's own "not JSON".
  const doc = jsonArrayDoc(addr.facts, "ip -j -d addr show");
  const ifs = doc.ok ? ipAddrInterfaces(doc.value) : doc;
  if (!ifs.ok)
    return { ok: false, error: { kind: "garbage", message: ifs.error, command: "ip -j -d addr show" } };
  const blank = addr.facts.trim() === "";
  const kubeIpvs0 = doc.ok && !blank ? kubeIpvs0FromAddrDoc(doc.value) : kubeIpvs0FromAddrListing(addr.facts);
  return { ok: true, value: { interfaces: ifs.value, kubeIpvs0 } };
}

async function runIp(ctx: ProbeContext, args: readonly string[]): Promise<ProbeOutcome<string>> {
  const r = await ctx.tools.run("ip", args, { timeoutMs: ctx.callTimeoutMs, maxBytes: MAX_BYTES });
  return r.ok ? { ok: true, facts: r.stdout } : r;
}

function garbage(message: string, command: string): ProbeOutcome<never> {
  return { ok: false, error: { kind: "garbage", message, command } };
}
