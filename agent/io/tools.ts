import { fileURLToPath } from "node:url";

// The one list of external programs the probes run. The Dockerfile installs exactly the Debian
// packages named here (a test checks it), and nothing is ever run by a name found on PATH.
export const TOOLS = {
  ip: { debianPackage: "iproute2", purpose: "kube-ipvs0 and local addresses" },
  nft: { debianPackage: "nftables", purpose: "nftables tables, sets, maps and chains; nft version" },
  ipset: { debianPackage: "ipset", purpose: "KUBE-* ipsets" },
  ipvsadm: { debianPackage: "ipvsadm", purpose: "IPVS timeouts and per-service stats" },
  "iptables-legacy-save": { debianPackage: "iptables", purpose: "iptables (legacy backend)" },
  "ip6tables-legacy-save": { debianPackage: "iptables", purpose: "ip6tables (legacy backend)" },
  "iptables-nft-save": { debianPackage: "iptables", purpose: "iptables (nf_tables backend)" },
  "ip6tables-nft-save": { debianPackage: "iptables", purpose: "ip6tables (nf_tables backend)" },
  "iptables-legacy": { debianPackage: "iptables", purpose: "cleanup: kube-proxy's chains (legacy)" },
  "ip6tables-legacy": { debianPackage: "iptables", purpose: "cleanup: kube-proxy's chains (legacy, IPv6)" },
  "iptables-nft": { debianPackage: "iptables", purpose: "cleanup: kube-proxy's chains (nf_tables)" },
  "ip6tables-nft": { debianPackage: "iptables", purpose: "cleanup: kube-proxy's chains (nf_tables, IPv6)" },
} as const;

// Programs that ship with the agent itself (dist/agent/native, built by scripts/build-native.sh), looked
// up only there: never a host binary of the same name.
const BUNDLED_TOOLS = {
  "proxyscope-nft-generation": {
    purpose: "the nf_tables ruleset generation id (what a cached read rests on)",
  },
} as const;

// Witnesses: another program's version of a tool, kept in a private directory (the image's
// /opt/nft-kube-proxy: Debian bookworm's nft 1.0.6 and its libraries, what kube-proxy's images carry) and
// run through that directory's own loader and libraries, so it never stands in for the agent's own tool
// of the same name. What it says is how THAT version reads this node, not a fact of the node by itself.
const WITNESS_TOOLS = {
  "kube-proxy-nft": {
    binary: "nft",
    purpose: "whether the nft of kube-proxy's image can list this node's sets (set names only)",
  },
} as const;

type BundledToolName = keyof typeof BUNDLED_TOOLS;
type WitnessToolName = keyof typeof WITNESS_TOOLS;
export type ToolName = keyof typeof TOOLS | BundledToolName | WitnessToolName;

/** Where the bundled programs are: beside the compiled agent (dist/agent/native). */
export const BUNDLED_TOOL_DIR = fileURLToPath(new URL("../native/", import.meta.url));

export const isBundledTool = (t: ToolName): t is BundledToolName => Object.hasOwn(BUNDLED_TOOLS, t);

export const isWitnessTool = (t: ToolName): t is WitnessToolName => Object.hasOwn(WITNESS_TOOLS, t);

/** Where the image keeps kube-proxy's nft (Dockerfile); a build or host without it has no witness. */
export const DEFAULT_WITNESS_DIR = "/opt/nft-kube-proxy";

/**
 * How a witness in `dir` is started: `dir/ld.so` (a link to the dynamic loader) with `dir/lib` as its
 * only library path, then `dir/<binary>` and the arguments. Through the loader, not a wrapper script
 * (no shell) nor LD_LIBRARY_PATH (tools run with a fixed environment), and the libraries of the same
 * sonames the agent's own tools use (trixie's libnftables1) never come first.
 */
export function witnessCommand(
  dir: string,
  tool: WitnessToolName,
  args: readonly string[],
): { loader: string; binary: string; args: string[] } {
  const binary = `${dir}/${WITNESS_TOOLS[tool].binary}`;
  return { loader: `${dir}/ld.so`, binary, args: ["--library-path", `${dir}/lib`, binary, ...args] };
}

// Where tools are looked up, in order. Overridable so tests can put a broken tool first, and so
// an image with an unusual layout can still be served; never derived from $PATH.
export const DEFAULT_TOOL_DIRS = ["/usr/sbin", "/sbin", "/usr/bin", "/bin"] as const;
