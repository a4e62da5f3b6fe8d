import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Test } from "tap";
import type { NodeReport } from "../../agent/report/schema.js";
import type { Link, NodeState, Profile, ProfileNode, VirtualServer } from "../profiles/profile.js";
import type { NetNs } from "./netns.js";
import { nodeMetricsText } from "../../agent/metrics/node-metrics.js";
import { alertsOnScrape } from "./quiet-alerts.js";
import { firstDeletion } from "./remedies.js";
import { RECORDINGS } from "../profiles/recorded.js";
import { REPO_ROOT } from "./uml.js";

// Builds the nodes of the profile corpus (test/profiles/corpus/*.ts) on a real kernel and checks what the
// agent said about them. The data says what a node holds; this file says how to load it, once for the
// host kernel (a network namespace) and once as a shell script for a User-Mode Linux guest.

const CORPUS = fileURLToPath(new URL("../profiles/corpus/", import.meta.url));
export const SOURCES = join(REPO_ROOT, "test/fixtures/netfilter/sources");

/** Every profile in the corpus, one per file, sorted by file name. */
export async function loadProfiles(): Promise<Profile[]> {
  const files = readdirSync(CORPUS)
    .filter((f) => /\.(ts|js)$/.test(f) && !f.endsWith(".d.ts"))
    .sort();
  const out: Profile[] = [];
  for (const f of files) {
    const mod = (await import(pathToFileURL(join(CORPUS, f)).href)) as { profile?: Profile };
    if (!mod.profile) throw new Error(`${f} exports no profile`);
    out.push(mod.profile);
  }
  return out;
}

export interface CorpusNode {
  profile: Profile;
  node: ProfileNode;
}

export const nodesOn = (profiles: Profile[], kernel: NodeState["kernel"]): CorpusNode[] =>
  profiles.flatMap((profile) =>
    profile.nodes.filter((n) => n.state.kernel === kernel).map((node) => ({ profile, node })),
  );

/** The scan's flags a node's state asks for (besides kube-proxy's URLs). */
export function scanFlags(s: NodeState): string[] {
  return [
    ...(s.nodeIps ?? []).flatMap((ip) => ["--node-ip", ip]),
    ...(s.nodePortRange ? ["--node-port-range", s.nodePortRange] : []),
  ];
}

const peerOf = (l: Link) => l.peer ?? `${l.name.slice(0, 12)}-p`;

/** `ip` argv (after `ip -n NS`) that make a link, for the host kernel or UML. */
function linkArgv(l: Link, kernel: NodeState["kernel"], vni: number): string[] {
  const veth = ["link", "add", l.name, "type", "veth", "peer", "name", peerOf(l)];
  switch (l.kind) {
    case "bridge":
      return ["link", "add", l.name, "type", "bridge"];
    case "vxlan":
      return ["link", "add", l.name, "type", "vxlan", "id", String(vni), "dstport", String(8472 + vni)];
    case "veth":
      return veth;
    case "nic":
    case "dummy":
      if (kernel === "uml") return ["link", "add", l.name, "type", "dummy"];
      // The host kernel has no dummy driver: a veth end stands in, except where the kind is the point.
      if (l.kind === "dummy" && /^kube-(ipvs0|dummy-if)$/.test(l.name))
        throw new Error(`${l.name} must be a real dummy link: build this node in UML`);
      return veth;
  }
}

/** Every `ip` command (argv after `ip -n NS`) that builds the node's links. */
export function linkCommands(s: NodeState): string[][] {
  const cmds: string[][] = [];
  (s.links ?? []).forEach((l, i) => {
    cmds.push(linkArgv(l, s.kernel, i + 1));
    for (const a of l.addresses ?? [])
      cmds.push(["addr", "add", a, "dev", l.name, ...(a.includes(":") ? ["nodad"] : [])]);
    if (l.up !== false) cmds.push(["link", "set", l.name, "up"]);
  });
  return cmds;
}

/** Loads a node's state into a network namespace on the host kernel (iptables-nft). */
export function buildInNetns(ns: NetNs, s: NodeState): void {
  if ((s.ipvs ?? []).length > 0)
    throw new Error("IPVS virtual servers need UML: the host kernel has no IPVS");
  ns.must(["ip", "link", "set", "lo", "up"]);
  for (const c of linkCommands(s)) ns.must(["ip", ...c]);
  const ipset = ipsetText(s);
  if (ipset !== "") ns.ipsetRestore(ipset);
  // kube-proxy (v1.33+) makes the nfacct counters its rules name before restoring them; a fresh
  // namespace has none and the kernel refuses the rule (ENOENT): add each one named, once.
  const rules = [...(s.iptables ?? []), ...(s.ip6tables ?? [])].map(src).join("\n");
  for (const name of new Set([...rules.matchAll(/--nfacct-name\s+(\S+)/g)].map((m) => m[1]!)))
    ns.must(["nfacct", "add", name]);
  for (const f of s.iptables ?? []) ns.iptablesRestore(src(f), "nft", "ipv4");
  for (const f of s.ip6tables ?? []) ns.iptablesRestore(src(f), "nft", "ipv6");
  for (const f of s.nft ?? []) ns.loadNft(src(f));
  for (const [k, v] of Object.entries(s.sysctls ?? {})) ns.must(["sysctl", "-qw", `${k}=${v}`]);
}

/** Where a NodeState file list entry lives: `real:<key>/<file>` is a recording of the real kube-proxy
 *  (test/profiles/recorded.ts), anything else a ruleset under test/fixtures/netfilter/sources. */
export const fixturePath = (f: string) =>
  f.startsWith("real:") ? join(RECORDINGS, f.slice("real:".length)) : join(SOURCES, f);

const src = (f: string) => readFileSync(fixturePath(f), "utf8");

/** The node's ipset state as one `ipset restore` input: the fixture files, then its own lines. */
export function ipsetText(s: NodeState): string {
  const parts = [...(s.ipsets ?? []).map(src), ...(s.ipsetLines ?? []).map((l) => `${l}\n`)];
  return parts.join("");
}

const shq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
const vip = (v: { address: string; port: number }) =>
  v.address.includes(":") ? `[${v.address}]:${v.port}` : `${v.address}:${v.port}`;
const METHOD = { masq: "-m", route: "-g", tunnel: "-i" } as const;

function ipvsadmCommands(vs: VirtualServer[]): string[][] {
  return vs.flatMap((v) => {
    const p = v.proto === "tcp" ? "-t" : "-u";
    return [
      [
        "ipvsadm",
        "-A",
        p,
        vip(v),
        "-s",
        v.scheduler ?? "rr",
        ...(v.persistent ? ["-p", String(v.persistent)] : []),
      ],
      ...v.reals.map((r) => [
        "ipvsadm",
        "-a",
        p,
        vip(v),
        "-r",
        vip(r),
        METHOD[r.method ?? "masq"],
        "-w",
        "1",
      ]),
    ];
  });
}

/**
 * The guest shell lines that build one node in its own namespace (iptables-legacy: UML's kernel) and scan
 * it. `$OUT/<name>.ipset` must hold ipsetText(state); `$OUT/<name>-kube-proxy.json` the stand-in's
 * scenario when kube-proxy answers. The guest script defines scan_with / scan_bare.
 */
export function umlNodeScript(name: string, s: NodeState): string {
  const inNs = (argv: string[]) => ["ip", "netns", "exec", name, ...argv].map(shq).join(" ");
  const lines = [`# --- ${name}`, `proxyscope_netns ${shq(name)}`];
  for (const c of linkCommands(s)) lines.push(["ip", "-n", name, ...c].map(shq).join(" "));
  if (ipsetText(s) !== "") lines.push(`${inNs(["ipset", "restore"])} < "$OUT/${name}.ipset"`);
  for (const f of s.iptables ?? [])
    lines.push(`${inNs(["iptables-legacy-restore", "--noflush"])} < ${shq(fixturePath(f))}`);
  for (const f of s.ip6tables ?? [])
    lines.push(`${inNs(["ip6tables-legacy-restore", "--noflush"])} < ${shq(fixturePath(f))}`);
  if ((s.nft ?? []).length > 0)
    throw new Error(`${name}: UML's nftables has no ip family; build it in netns`);
  for (const c of ipvsadmCommands(s.ipvs ?? [])) lines.push(inNs(c));
  for (const [k, v] of Object.entries(s.sysctls ?? {})) lines.push(inNs(["sysctl", "-qw", `${k}=${v}`]));
  lines.push(`${s.kubeProxy ? "scan_with" : "scan_bare"} ${[name, ...scanFlags(s)].map(shq).join(" ")}`);
  return lines.join("\n");
}

/** The corpus's invariant ("Done when" of the real-cluster verdicts): a deleting remedy is the thing to do only when
 *  kube-proxy itself answered /proxyMode; otherwise it confirms first and deletes only on a condition.
 *  Returns what breaks it, empty when nothing does. */
export function deletionViolations(r: NodeReport): string[] {
  if (r.phaseSource === "proxyMode") return [];
  const out: string[] = [];
  for (const f of r.findings) {
    const at = firstDeletion(f.remedy);
    if (at < 0) continue;
    if (!f.remedy.startsWith("Confirm first what runs on this node"))
      out.push(`${f.id}: a deleting remedy on a guessed phase that does not confirm first`);
    const only = f.remedy.indexOf("Only if ");
    if (only < 0 || only > at) out.push(`${f.id}: deletes before saying on which condition`);
  }
  return out;
}

/** Asserts what the profile expects of this node: phase and how it is known, verdict, the exact ids, and
 *  the deletion invariant. */
/**
 * A node the SRE calls healthy (ready to switch, or clean after it, kube-proxy-free included) raises no
 * alert: its /metrics, through every shipped alert rule, with promtool.
 */
export async function checkQuiet(t: Test, node: ProfileNode, r: NodeReport): Promise<void> {
  if (node.expect.verdict !== "ready" && node.expect.verdict !== "clean") return;
  t.equal(alertsOnScrape(await nodeMetricsText(r), node.name), null, "no alert fires on this healthy node");
}

export function checkNode(t: Test, node: ProfileNode, r: NodeReport): void {
  const e = node.expect;
  const pending = e.waitsFor ? ` (waits for ${e.waitsFor})` : "";
  t.equal(r.phase, e.phase, `phase${pending}`);
  t.equal(r.phaseSource, e.phaseSource, "how the phase is known");
  t.equal(r.verdict, e.verdict, `verdict: ${node.why}${pending}`);
  t.same(
    r.findings.map((f) => f.id).sort(),
    [...e.findings].sort(),
    `exactly these findings${pending}; got: ${r.findings.map((f) => `${f.id} [${f.severity}] ${f.title}`).join(" | ")}`,
  );
  for (const [id, want] of Object.entries(e.evidence ?? {}))
    for (const [k, v] of Object.entries(want))
      t.same(r.findings.find((f) => f.id === id)?.evidence[k], v, `${id}: evidence ${k}`);
  t.same(deletionViolations(r), [], "no deletion is the thing to do unless kube-proxy answered /proxyMode");
  t.same(
    r.probes
      .filter((p) => !p.ok && !p.name.startsWith("kube-proxy"))
      .map((p) => `${p.name}: ${p.error?.message}`),
    [],
    "every part of the node was read",
  );
}
