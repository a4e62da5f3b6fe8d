import type { KernelFacts } from "../facts/host.js";
import { excerpt, parsed, unparsable } from "./result.js";
import type { Result } from "../../common/result.js";

// Every version the project compares (kernel releases, host nft, kube-proxy's gitVersion), read and
// compared one way, with each threshold written once.

/** nftables mode has no partial support and no fallback below this kernel (KEP-3866; the guide). */
export const NFTABLES_MIN_KERNEL = [5, 13] as const;
/** kube-proxy's nftables mode needs host nft 1.0.1 or newer. */
export const NFT_MIN_VERSION = [1, 0, 1] as const;

/**
 * Host nft from which sets carry user data (udata) that older nft binaries segfault on while reading
 * them: "nftables 1.1.2+ began writing user-data (udata) fields when creating sets" (microsoft/azurelinux
 * #17760, upstream nftables be737a1986bf); kube-proxy's threads say "1.1.3" (kubernetes/kubernetes#136786,
 * #137501). The earlier of the two, so a 1.1.2 host is not passed.
 */
export const NFT_WRITES_SET_UDATA = [1, 1, 2] as const;
/**
 * First patch of each minor with "Fix kube-proxy on systems with nft 1.1.3 (take 2)" (kubernetes/kubernetes
 * #137501: kube-proxy lists only its own table; cherry-picks #137809 -> 1.33.11, #137808 -> 1.34.7,
 * #137807 -> 1.35.4; in 1.36.0). Minors before 1.33 never got it. It fixed the listing, not the sync.
 */
const KUBE_PROXY_NFT_LISTING_FIXED_IN: Readonly<Record<number, number>> = {
  33: 11,
  34: 7,
  35: 4,
  36: 0,
};
/**
 * kube-proxy whose image carries nft 1.0.6.1 built with the patch (kubernetes/kubernetes#140405, merged to
 * master 2026-07-10, "Fixes #136786"; distroless-iptables v0.9.4, kubernetes/release#4419/#4453). No
 * cherry-pick to 1.33-1.36 was found, so only v1.37.0 and later.
 */
export const KUBE_PROXY_NFT_IMAGE_FIXED = [1, 37, 0] as const;

/**
 * How far a kube-proxy release is from the crash on sets a newer nft wrote: "none" (neither fix),
 * "listing" (#137501 only: the sync can still crash, #136786 reopened, #140898), "image" (#140405).
 */
export function kubeProxyNftUdataFix(version: readonly number[]): "none" | "listing" | "image" {
  if (compareVersions(version, KUBE_PROXY_NFT_IMAGE_FIXED) >= 0) return "image";
  const [major, minor, patch] = version as [number, number, number];
  if (major !== 1) return "none";
  const fixed = KUBE_PROXY_NFT_LISTING_FIXED_IN[minor];
  return fixed !== undefined && patch >= fixed ? "listing" : "none";
}

/** Whether host nft writes sets an older nft crashes on; null when the version is unknown. */
export function nftWritesSetUdata(version: string | null | undefined): boolean | null {
  const parts = versionParts(version);
  return parts === null ? null : compareVersions(parts, NFT_WRITES_SET_UDATA) >= 0;
}

/** Parses /proc/sys/kernel/osrelease ("6.8.0-51-generic", "5.4.0", "6.1.176"). */
export function parseKernelRelease(text: string): Result<KernelFacts> {
  const release = text.trim();
  const m = /^(\d{1,9})\.(\d{1,9})(?:\.(\d{1,9}))?(?!\d)/.exec(release);
  if (!m || release.includes("\n")) return unparsable(`not a kernel release: ${excerpt(text)}`);
  return parsed({ release, major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3] ?? 0) });
}

/** "6.8.0-51-generic" (as the API server's nodeInfo gives it) -> 6.8; null when it does not start with a version. */
export function kernelMajorMinor(s: string | null | undefined): { major: number; minor: number } | null {
  return majorMinor(/^(\d+)\.(\d+)/.exec((s ?? "").trim()));
}

/** "v1.37.2-eks-abc" -> 1.37; null when it does not look like a Kubernetes version. */
export function kubeMajorMinor(s: string | null | undefined): { major: number; minor: number } | null {
  return majorMinor(/^v?(\d+)\.(\d+)/.exec(s ?? ""));
}

// 400 digits are not a version: Number() gives Infinity (null in JSON, outside the report's schema).
function majorMinor(m: RegExpExecArray | null): { major: number; minor: number } | null {
  if (!m) return null;
  const major = Number(m[1]);
  const minor = Number(m[2]);
  return Number.isSafeInteger(major) && Number.isSafeInteger(minor) ? { major, minor } : null;
}

/** Whether kube-proxy can start in nftables mode on this kernel. */
export function kernelCanRunNftables(k: { major: number; minor: number }): boolean {
  return compareVersions([k.major, k.minor], NFTABLES_MIN_KERNEL) >= 0;
}

/** The same, from a release string; null when the string is not a kernel release. */
export function releaseCanRunNftables(release: string | null | undefined): boolean | null {
  const k = kernelMajorMinor(release);
  return k === null ? null : kernelCanRunNftables(k);
}

/** "v1.33.1", "1.0.6", "v1.31.0-eks-1234" -> [1, 33, 1]; null when no leading number. */
export function versionParts(v: string | null | undefined): number[] | null {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(v ?? "");
  if (!m) return null;
  return [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)];
}

/**
 * Numeric dotted comparison, missing parts 0: -1, 0 or 1. Takes parts ([1, 0, 1]) or dotted
 * upstream versions ("0.9.3" < "1.0.1" < "1.0.10").
 */
export function compareVersions(a: readonly number[] | string, b: readonly number[] | string): number {
  const pa = typeof a === "string" ? a.split(".").map(Number) : a;
  const pb = typeof b === "string" ? b.split(".").map(Number) : b;
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}

/** Whether host nft is new enough for nftables mode; null when the version is unknown or unreadable. */
export function nftNewEnough(version: string | null | undefined): boolean | null {
  const parts = versionParts(version);
  return parts === null ? null : compareVersions(parts, NFT_MIN_VERSION) >= 0;
}

/**
 * First kube-proxy with ipvs mode's KUBE-IPVS-FILTER chain, which REJECTs new connections to kube-ipvs0's
 * addresses on ports no Service serves (kubernetes/kubernetes#108460 "Prevent host access on VIP
 * addresses in proxy-mode=ipvs", fixing #72236). First released in v1.26.0: pkg/proxy/ipvs/proxier.go names
 * no KUBE-IPVS-FILTER at v1.25.0 nor at the last 1.25 patch, v1.25.16, and does at v1.26.0 (module
 * sources, k8s.io/kubernetes). Older ipvs mode let host services answer on every Service IP and the
 * Service IPs answer ping.
 */
export const KUBE_PROXY_IPVS_FILTER = [1, 26, 0] as const;
