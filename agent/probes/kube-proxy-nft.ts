import type { KubeProxyNftFacts } from "../facts/kube-proxy-nft.js";
import { parseNftVersionOutput } from "../parse/nft-version.js";
import { gatedRead, type Read } from "./gated-read.js";
import { defineProbe, type ProbeContext } from "./types.js";

// Set names only (`-t`: no elements): ~0.1 s at 10,000 Services on nft 1.0.6 (bench/results/nft-calls-10000.md),
// and enough: 1.0.6 dies loading any set nft >= 1.1.2 wrote, elements or not (test/kernel/nft11-sets-netns.test.ts).
const ARGS = ["-j", "-t", "list", "sets"] as const;
const MAX_BYTES = 16 * 1024 * 1024;
const COMMAND = `kube-proxy-nft ${ARGS.join(" ")}`;

// The witness's version does not change while the agent runs: asked once per runner, kept once known.
const versions = new WeakMap<ProbeContext["tools"], string>();

/**
 * Whether the nft of kube-proxy's image can list this node's sets, asked of the witness the agent's image
 * carries (io/tools.ts). Its answer depends only on the ruleset, so it is read again only when the
 * nf_tables generation moved (gated like the nftables read). A crash is an answer, not a failed probe:
 * the rule nft-host-newer-than-kube-proxy-supports fires from it.
 */
export const kubeProxyNftProbe = defineProbe("kube-proxy-nft", {
  async run(ctx) {
    // A failed ask (a timeout, an exit status) is not kept: the next scan asks again.
    const r = await gatedRead(ctx, "kube-proxy-nft", [], () => ask(ctx));
    const answer: Answer = r.ok
      ? r.value
      : { outcome: "failed", command: COMMAND, detail: `${r.error.kind}: ${r.error.message}` };
    const version = answer.outcome === "not-present" ? null : await witnessVersion(ctx);
    return { ok: true, facts: { ...answer, version } };
  },
});

type Answer = Omit<KubeProxyNftFacts, "version">;

async function ask(ctx: ProbeContext): Promise<Read<Answer>> {
  const ex = await ctx.tools.run("kube-proxy-nft", ARGS, {
    timeoutMs: ctx.callTimeoutMs,
    maxBytes: MAX_BYTES,
  });
  const answer = (value: Answer): Read<Answer> => ({ ok: true, value });
  if (ex.ok) return answer({ outcome: "ok", command: COMMAND, detail: "it listed every set of this node" });
  const { kind, message } = ex.error;
  if (kind === "missing-tool") {
    return answer({ outcome: "not-present", command: COMMAND, detail: `not asked: ${message}` });
  }
  // ToolRunner's one wording for a tool a signal ended (not a timeout's kill, which says "timeout").
  const signal = kind === "exec-failed" ? /\bkilled by (SIG[A-Z0-9]+)\b/.exec(message)?.[1] : undefined;
  if (signal !== undefined) return answer({ outcome: "crashed", command: COMMAND, signal, detail: message });
  return { ok: false, error: ex.error };
}

async function witnessVersion(ctx: ProbeContext): Promise<string | null> {
  const known = versions.get(ctx.tools);
  if (known !== undefined) return known;
  const ex = await ctx.tools.run("kube-proxy-nft", ["--version"], {
    timeoutMs: ctx.callTimeoutMs,
    maxBytes: 4096,
  });
  const v = ex.ok ? parseNftVersionOutput(ex.stdout) : null;
  if (!v?.ok) return null;
  versions.set(ctx.tools, v.value);
  return v.value;
}
