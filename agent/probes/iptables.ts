import type { IptablesBackendFacts } from "../facts/netfilter.js";
import type { ProbeErrorKind } from "../facts/probe-error.js";
import type { ToolName } from "../io/tools.js";
import { IptablesSaveParser } from "../parse/iptables-save.js";
import { defineProbe, type ProbeContext } from "./types.js";

// An iptables-mode node with 10,000 Services prints hundreds of thousands of lines; it is parsed as
// it streams, and this only bounds a runaway tool.
const MAX_BYTES = 512 * 1024 * 1024;

const BACKENDS: readonly {
  tool: ToolName;
  backend: IptablesBackendFacts["backend"];
  family: IptablesBackendFacts["family"];
}[] = [
  { tool: "iptables-legacy-save", backend: "legacy", family: "ipv4" },
  { tool: "ip6tables-legacy-save", backend: "legacy", family: "ipv6" },
  { tool: "iptables-nft-save", backend: "nft", family: "ipv4" },
  { tool: "ip6tables-nft-save", backend: "nft", family: "ipv6" },
];

function unavailable(b: (typeof BACKENDS)[number], error: string): IptablesBackendFacts {
  return {
    backend: b.backend,
    family: b.family,
    available: false,
    error,
    totalRules: 0,
    kubeChains: [],
    patternCounts: {},
    foreignJumps: [],
    policies: {},
    nodePortAccepts: [],
    firewallChains: {},
  };
}

type Read = { facts: IptablesBackendFacts; kind?: ProbeErrorKind };

async function readBackend(ctx: ProbeContext, b: (typeof BACKENDS)[number]): Promise<Read> {
  const parser = new IptablesSaveParser(b.backend, b.family);
  const r = await ctx.tools.streamLines(
    b.tool,
    ["-c"],
    { timeoutMs: ctx.callTimeoutMs, maxBytes: MAX_BYTES },
    (l) => parser.feed(l),
  );
  if (!r.ok) return { facts: unavailable(b, `${r.error.kind}: ${r.error.message}`), kind: r.error.kind };
  const p = parser.finish();
  if (!p.ok) return { facts: unavailable(b, `garbage: ${b.tool} -c: ${p.error}`), kind: "garbage" };
  return { facts: p.value };
}

// All four *-save tools: a node can carry state in both backends at once (a kubelet or CNI on
// legacy next to kube-proxy on nft), and the leftovers of one mode may sit in the other backend.
export const iptablesProbe = defineProbe("iptables", {
  async run(ctx) {
    const reads: Read[] = [];
    for (const b of BACKENDS) reads.push(await readBackend(ctx, b));
    const backends = reads.map((r) => r.facts);
    // A backend the kernel or image lacks is a fact; one we were refused, that hung or that flooded
    // past its cap is not: a partial view could hide kube-proxy's chains, so the probe fails and says which.
    const untrusted = reads.find(
      (r) => r.kind === "not-permitted" || r.kind === "timeout" || r.kind === "output-cap",
    );
    if (untrusted?.kind !== undefined) {
      return {
        ok: false,
        error: {
          kind: untrusted.kind,
          message: `${untrusted.facts.backend} ${untrusted.facts.family} could not be read, so the view of iptables would be partial: ${untrusted.facts.error}`,
          command: BACKENDS.map((b) => `${b.tool} -c`).join(", "),
        },
      };
    }
    if (backends.every((b) => !b.available)) {
      const kinds = new Set(reads.map((r) => r.kind));
      const [only] = kinds;
      return {
        ok: false,
        error: {
          kind: kinds.size === 1 && only !== undefined ? only : "exec-failed",
          message: `no iptables backend could be read: ${backends.map((b) => b.error).join("; ")}`,
          command: BACKENDS.map((b) => `${b.tool} -c`).join(", "),
        },
      };
    }
    return { ok: true, facts: { backends } };
  },
});
