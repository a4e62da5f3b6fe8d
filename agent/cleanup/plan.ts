import type { VirtualServer } from "../facts/ipvs.js";
import type { NodeReport } from "../report/schema.js";
import { KUBE_ROUTER_LINK } from "../view/other-proxy.js";
import { connectionsTo, cutNote } from "../view/ipvs-connections.js";
import { vsKey } from "../parse/ipvs-proc.js";
import { deletionProof, type IpvsEvidence } from "./ipvs-proof.js";
import type { IptablesRuleSet } from "./iptables-rules.js";
import { planIptables } from "./plan-iptables.js";
import type { CleanupAction, CleanupPlan, KeptItem } from "./schema.js";
import { sysctlValue } from "../facts/host.js";

/** A backend whose rules could not be read for cleanup: nothing in it is touched. */
interface RuleSetUnreadable {
  backend: IptablesRuleSet["backend"];
  family: IptablesRuleSet["family"];
  error: string;
}
export type RuleSetRead = IptablesRuleSet | RuleSetUnreadable;

interface PlanOptions {
  /** Reset the strictARP sysctls too (they are harmless; only on request). */
  strictArp: boolean;
  /** Forwarding and kube-proxy's ipset members, read for cleanup; absent: every virtual server unknown. */
  ipvsEvidence?: IpvsEvidence;
}

// kube-proxy's ipvs mode sets exactly these (pkg/proxy/ipvs/proxier.go, strictARP).
const STRICT_ARP = [
  { name: "net.ipv4.conf.all.arp_ignore", set: "1" },
  { name: "net.ipv4.conf.all.arp_announce", set: "2" },
] as const;

const PROTO_FLAG: Record<string, string> = { TCP: "-t", UDP: "-u", SCTP: "--sctp-service" };

function vsName(v: VirtualServer): string {
  if (v.address === null) return `FWM ${v.fwmark}`;
  const a = v.family === "inet6" ? `[${v.address}]` : v.address;
  return `${v.protocol} ${a}:${v.port}`;
}

function exec(
  step: CleanupAction["step"],
  target: string,
  tool: "ipvsadm" | "ipset" | "ip",
  args: string[],
): CleanupAction {
  return { step, target, run: { kind: "exec", tool, args }, command: [tool, ...args].join(" ") };
}

type IpvsPlan = { actions: CleanupAction[]; kept: KeptItem[]; unread: KeptItem[] };

function planIpvs(report: NodeReport, evidence: IpvsEvidence | undefined): IpvsPlan {
  const f = report.facts;
  if (f.ipvs === null)
    return { actions: [], kept: [], unread: [{ what: "IPVS", why: probeWhy(report, "ipvs") }] };
  if (f.ipvs.virtualServerCount === 0) return { actions: [], kept: [], unread: [] };
  const cut = ["facts.ipvs.virtualServers", "facts.kubeIpvs0.addresses"].filter((p) => p in report.truncated);
  if (cut.length > 0 || f.ipvs.virtualServers.length !== f.ipvs.virtualServerCount) {
    return {
      actions: [],
      kept: [],
      unread: [
        { what: "IPVS virtual servers", why: `the report lists only part of them (${cut.join(", ")})` },
      ],
    };
  }
  const kubeIpvs0 = f.kubeIpvs0 === null ? null : new Set(f.kubeIpvs0.addresses.map((a) => a.address));
  const kubeRouterIps =
    f.addresses === null
      ? null
      : new Set(
          f.addresses.interfaces
            .filter((i) => i.name === KUBE_ROUTER_LINK)
            .flatMap((i) => i.addresses.map((a) => a.address)),
        );
  const ctx = { kubeIpvs0, primary: f.addresses?.primary ?? null, kubeRouterIps };
  const ev: IpvsEvidence = evidence ?? {
    read: false,
    why: "the IPVS table and kube-proxy's ipsets were not read for cleanup",
  };
  const mine: VirtualServer[] = [];
  const kept: KeptItem[] = [];
  const unread: KeptItem[] = [];
  for (const v of f.ipvs.virtualServers) {
    const p = deletionProof(v, ev, ctx);
    if (p.proven) mine.push(v);
    else (p.leave === "unread" ? unread : kept).push({ what: `IPVS ${vsName(v)}`, why: p.why });
  }
  if (mine.length === 0) return { actions: [], kept, unread };
  const keys = new Set(mine.map(vsKey));
  // --clear would take any other virtual server with it: only when every one is kube-proxy's.
  if (kept.length === 0 && unread.length === 0)
    return {
      actions: [
        exec(
          "ipvs-clear",
          `${mine.length} virtual servers${cutNote(
            connectionsTo(f, (a) => keys.has(vsKey({ ...a, fwmark: null }))),
            "through them",
          )}`,
          "ipvsadm",
          ["--clear"],
        ),
      ],
      kept,
      unread,
    };
  const actions = mine.map((v) => {
    const addr = v.family === "inet6" ? `[${v.address}]:${v.port}` : `${v.address}:${v.port}`;
    return exec("ipvs-delete-service", vsName(v), "ipvsadm", ["-D", PROTO_FLAG[v.protocol] as string, addr]);
  });
  return { actions, kept, unread };
}

function probeWhy(report: NodeReport, probe: string): string {
  const p = report.probes.find((x) => x.name === probe);
  if (p === undefined) return `not scanned (no ${probe} probe ran)`;
  return `not read: ${p.error?.kind ?? "failed"}: ${p.error?.message ?? ""}`;
}

/**
 * What cleanup would remove from this node, in order, as exact commands, and what it leaves and why.
 * Pure: `report` must carry full (uncut) facts; `ruleSets` are the iptables rules read for cleanup.
 */
export function planCleanup(
  report: NodeReport,
  ruleSets: readonly RuleSetRead[],
  opts: PlanOptions,
): CleanupPlan {
  const f = report.facts;
  const kept: KeptItem[] = [];
  const unread: KeptItem[] = [];
  const readable = ruleSets.filter((r): r is IptablesRuleSet => !("error" in r));
  for (const r of ruleSets)
    if ("error" in r)
      unread.push({
        what: `iptables ${r.backend} ${r.family}`,
        why: `rules not read, nothing touched: ${r.error}`,
      });
  if (f.iptables === null) unread.push({ what: "iptables", why: probeWhy(report, "iptables") });
  // A rule in a backend not read may match any of kube-proxy's sets: then none is destroyed.
  const rulesUnread = f.iptables === null || readable.length < ruleSets.length;

  const ipt = planIptables(readable);
  kept.push(...ipt.kept);

  const sets: CleanupAction[] = [];
  if (f.ipsets === null) unread.push({ what: "ipsets", why: probeWhy(report, "ipsets") });
  for (const s of f.ipsets?.sets ?? []) {
    if (!s.kubeProxy) continue;
    const inUse = ipt.setsInUse.get(s.name);
    if (inUse !== undefined) kept.push({ what: `ipset ${s.name}`, why: inUse });
    else if (rulesUnread)
      kept.push({ what: `ipset ${s.name}`, why: "iptables rules not all read: one may still match it" });
    else sets.push(exec("ipset-destroy", s.name, "ipset", ["destroy", s.name]));
  }

  const ipvs = planIpvs(report, opts.ipvsEvidence);
  kept.push(...ipvs.kept);
  unread.push(...ipvs.unread);

  // After the virtual servers: kube-ipvs0's addresses are what tells a leftover Service IP from a foreign one.
  const link: CleanupAction[] = [];
  if (f.kubeIpvs0 === null) unread.push({ what: "kube-ipvs0", why: probeWhy(report, "kube-ipvs0") });
  else if (f.kubeIpvs0.present) {
    const onLink = new Set(f.kubeIpvs0.addresses.map((a) => a.address));
    const linkCut = cutNote(
      connectionsTo(f, (a) => onLink.has(a.address)),
      "to its Service IPs",
    );
    link.push(
      exec("link-delete", `kube-ipvs0 (${f.kubeIpvs0.addresses.length} addresses)${linkCut}`, "ip", [
        "link",
        "delete",
        "kube-ipvs0",
      ]),
    );
  }

  const sysctls: CleanupAction[] = [];
  if (opts.strictArp && f.sysctls === null)
    unread.push({ what: "sysctls", why: probeWhy(report, "sysctls") });
  for (const s of STRICT_ARP) {
    const v = sysctlValue(f.sysctls, s.name);
    if (v === null || v === "0") continue;
    if (!opts.strictArp) {
      kept.push({
        what: `${s.name}=${v}`,
        why: "strictARP sysctls are harmless; pass --strict-arp to reset them",
      });
      continue;
    }
    sysctls.push({
      step: "sysctl-reset",
      target: `${s.name} (was ${v})`,
      run: { kind: "sysctl", name: s.name, value: "0" },
      command: `sysctl -w ${s.name}=0`,
    });
  }
  // Sets only after every rule matching them is gone; kernel refuses to destroy a set in use.
  return { actions: [...ipt.actions, ...sets, ...ipvs.actions, ...link, ...sysctls], kept, unread };
}
