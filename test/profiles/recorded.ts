import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Link, Profile, RecordingSpec, VirtualServer } from "./profile.js";

// kube-proxy's OWN kernel state on a profile node, as the REAL binary made it: recorded by
// test/profiles/record-kube-proxy.ts (the binary run against the API server stand-in with the node's
// links, addresses, config and Services) into test/fixtures/kube-proxy/profiles/<key>/, and read here.
// Nothing of kube-proxy's tables, chains, sets, virtual servers or kube-ipvs0 addresses is written by
// hand in the corpus any more; the plugins' rulesets around them still are (test/fixtures/netfilter).

export const RECORDINGS = fileURLToPath(new URL("../fixtures/kube-proxy/profiles/", import.meta.url));

/** The files a recording holds, per mode (each begins with `#` header lines: version and command). */
export const RECORDED_FILES = {
  ipvs: ["ipset.save", "iptables.save", "ip6tables.save", "ipvsadm.save", "kube-ipvs0.addresses"],
  nftables: ["nft-ip.nft", "nft-ip6.nft"],
  iptables: ["iptables-nft.save", "ip6tables-nft.save"],
} as const;

/** The releases built by test/kube-proxy/build.mjs; a profile's version is recorded with the nearest. */
export const REAL_RELEASES = ["v1.31.14", "v1.34.4", "v1.37.2"] as const;

/** The real release nearest a profile's kube-proxy version (`v1.33.5+k3s1`, `v1.36.0-eksbuild.9`, ...). */
export function nearestRelease(version: string): string {
  const m = /^v1\.(\d+)\./.exec(version);
  if (!m) throw new Error(`not a kube-proxy version: ${version}`);
  const minor = Number(m[1]);
  let best: string = REAL_RELEASES[0];
  for (const r of REAL_RELEASES)
    if (Math.abs(Number(r.split(".")[1]) - minor) < Math.abs(Number(best.split(".")[1]) - minor)) best = r;
  return best;
}

/** The recording's folder name: mode, release, node address and a hash of everything else it ran with. */
export function recordingKey(spec: RecordingSpec): string {
  const hash = createHash("sha256").update(JSON.stringify(spec)).digest("hex").slice(0, 10);
  return `${spec.mode}-${spec.version}-${spec.nodeIps[0]}-${hash}`;
}

/** Every recording the corpus asks for, once each, by key. */
export function recordingsOf(profiles: Profile[]): Map<string, RecordingSpec> {
  const out = new Map<string, RecordingSpec>();
  for (const p of profiles)
    for (const n of p.nodes) for (const s of n.state.recordings ?? []) out.set(recordingKey(s), s);
  return out;
}

/** `real:<key>/<file>`: the spelling NodeState's file lists use for a recorded file. */
export const realFile = (spec: RecordingSpec, file: string) => `real:${recordingKey(spec)}/${file}`;

export function recordedPath(spec: RecordingSpec, file: string): string {
  return join(RECORDINGS, recordingKey(spec), file);
}

/** What is on the node after an ipvs recording's switch (RecordingSpec.then). */
export const AFTER_FILES = [
  "ipset.after.save",
  "iptables.after.save",
  "ip6tables.after.save",
  "ipvsadm.after.save",
  "kube-ipvs0.after.addresses",
] as const;

/** Every file one recording holds. */
export const recordedFiles = (spec: RecordingSpec): string[] => [
  ...RECORDED_FILES[spec.mode],
  ...(spec.then ? AFTER_FILES : []),
];

/** True when every file of the recording is there. */
export function isRecorded(spec: RecordingSpec): boolean {
  return recordedFiles(spec).every((f) => existsSync(recordedPath(spec, f)));
}

const body = (text: string) =>
  text
    .split("\n")
    .filter((l) => l.trim() !== "" && !l.startsWith("#"))
    .join("\n");

/** A recorded file without its header; "" when it is not recorded yet (the corpus test names that). */
export function readRecorded(spec: RecordingSpec, file: string): string {
  const p = recordedPath(spec, file);
  return existsSync(p) ? body(readFileSync(p, "utf8")) : "";
}

const METHOD = { "-m": "masq", "-g": "route", "-i": "tunnel" } as const;
const hostPort = (s: string): { address: string; port: number } => {
  const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(s);
  if (!m) throw new Error(`ipvsadm address:port expected, got ${s}`);
  return { address: m[1]!, port: Number(m[2]) };
};

/**
 * `ipvsadm -Sn` (what the recording saved) as the corpus's VirtualServer list. Only what kube-proxy
 * sets is accepted (tcp/udp, a scheduler, masq reals of weight 1, persistence); anything else is a
 * named error, so a recording holding more than the loaders can rebuild never loads as less.
 */
export function parseIpvsadmSave(text: string): VirtualServer[] {
  const out: VirtualServer[] = [];
  for (const line of body(text).split("\n").filter(Boolean)) {
    const a = line.trim().split(/\s+/);
    const proto = a[1] === "-t" ? "tcp" : a[1] === "-u" ? "udp" : null;
    if (proto === null) throw new Error(`ipvsadm -Sn: unsupported protocol in: ${line}`);
    const vip = hostPort(a[2] ?? "");
    if (a[0] === "-A") {
      const s = a.indexOf("-s");
      const p = a.indexOf("-p");
      out.push({
        proto,
        ...vip,
        scheduler: s > 0 ? a[s + 1]! : "wlc",
        ...(p > 0 ? { persistent: Number(a[p + 1]) } : {}),
        reals: [],
      });
    } else if (a[0] === "-a") {
      const vs = out.find((v) => v.proto === proto && v.address === vip.address && v.port === vip.port);
      if (!vs) throw new Error(`ipvsadm -Sn: real server before its virtual server: ${line}`);
      const r = a.indexOf("-r");
      const how = a.find((x): x is keyof typeof METHOD => x in METHOD) ?? "-m";
      const w = a.indexOf("-w");
      if (w > 0 && a[w + 1] !== "1") throw new Error(`ipvsadm -Sn: weight other than 1: ${line}`);
      vs.reals.push({ ...hostPort(a[r + 1] ?? ""), method: METHOD[how] });
    } else throw new Error(`ipvsadm -Sn: unexpected line: ${line}`);
  }
  return out;
}

/** The addresses the recording found on kube-ipvs0, "a.b.c.d/32" (`ip -o addr show dev kube-ipvs0`). */
export function kubeIpvs0Addresses(spec: RecordingSpec): string[] {
  return readRecorded(spec, "kube-ipvs0.addresses").split("\n").filter(Boolean);
}

/** kube-ipvs0 as the recording left it: a dummy link holding those addresses, not brought up
 *  (kube-proxy's EnsureDummyDevice only adds it). */
export const recordedKubeIpvs0 = (spec: RecordingSpec): Link => ({
  name: "kube-ipvs0",
  kind: "dummy",
  addresses: kubeIpvs0Addresses(spec),
  up: false,
});
