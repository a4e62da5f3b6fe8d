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

type BundledToolName = keyof typeof BUNDLED_TOOLS;
export type ToolName = keyof typeof TOOLS | BundledToolName;

/** Where the bundled programs are: beside the compiled agent (dist/agent/native). */
export const BUNDLED_TOOL_DIR = fileURLToPath(new URL("../native/", import.meta.url));

export const isBundledTool = (t: ToolName): t is BundledToolName => Object.hasOwn(BUNDLED_TOOLS, t);

// Where tools are looked up, in order. Overridable so tests can put a broken tool first, and so
// an image with an unusual layout can still be served; never derived from $PATH.
export const DEFAULT_TOOL_DIRS = ["/usr/sbin", "/sbin", "/usr/bin", "/bin"] as const;
