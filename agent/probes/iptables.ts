import type { SourceFreshness } from "../facts/freshness.js";
import type { IptablesBackendFacts } from "../facts/netfilter.js";
import type { ProbeError } from "../facts/probe-error.js";
import { readTextFile } from "../../common/regular-file.js";
import type { ToolName } from "../io/tools.js";
import { IptablesSaveParser } from "../parse/iptables-save.js";
import { gatedRead } from "./gated-read.js";
import { defineProbe, type ProbeContext } from "./types.js";

// An iptables-mode node with 10,000 Services prints hundreds of thousands of lines; it is parsed as
// it streams, and this only bounds a runaway tool.
const MAX_BYTES = 512 * 1024 * 1024;

const BACKENDS: readonly {
  tool: ToolName;
  backend: IptablesBackendFacts["backend"];
  family: IptablesBackendFacts["family"];
  /** The nf_tables backend is reused while the ruleset generation stands still; legacy is not nf_tables. */
  source?: SourceFreshness["source"];
}[] = [
  { tool: "iptables-legacy-save", backend: "legacy", family: "ipv4" },
  { tool: "ip6tables-legacy-save", backend: "legacy", family: "ipv6" },
  { tool: "iptables-nft-save", backend: "nft", family: "ipv4", source: "iptables-nft" },
  { tool: "ip6tables-nft-save", backend: "nft", family: "ipv6", source: "ip6tables-nft" },
];

const LEGACY_NAMES: Record<IptablesBackendFacts["family"], string> = {
  ipv4: "net/ip_tables_names",
  ipv6: "net/ip6_tables_names",
};

type Backend = (typeof BACKENDS)[number];

function unread(b: Backend, why: ProbeError): IptablesBackendFacts {
  return { backend: b.backend, family: b.family, read: false, why };
}

/**
 * Whether this namespace has legacy tables of this family, from the list iptables-legacy-save itself
 * prints them from (/proc/net/ip_tables_names, one name per line): "none" when ip(6)_tables is not
 * loaded (no list) or has made no table here yet (an empty list: tables are made per namespace on first
 * use), and then the tool could only print nothing. "some", or "unknown" when the list could not be
 * read (never taken for none). Asked before the tool: on a node without legacy tables that is two
 * fewer forks of the agent in every scan, most of a steady scan's own CPU at 10,000 Services.
 */
async function legacyTables(ctx: ProbeContext, b: Backend): Promise<"none" | "some" | "unknown"> {
  const r = await readTextFile(`${ctx.procRoot}/${LEGACY_NAMES[b.family]}`, 4096);
  if (!r.ok) return r.missing ? "none" : "unknown";
  return r.text.trim() === "" ? "none" : "some";
}

async function readBackend(ctx: ProbeContext, b: Backend): Promise<IptablesBackendFacts> {
  const command = `${b.tool} -c`;
  const parser = new IptablesSaveParser(b.backend, b.family);
  if (b.backend === "legacy" && (await legacyTables(ctx, b)) === "none") {
    const empty = parser.finish();
    if (empty.ok) return empty.value;
  }
  const r = await ctx.tools.streamLines(
    b.tool,
    ["-c"],
    { timeoutMs: ctx.callTimeoutMs, maxBytes: MAX_BYTES },
    (l) => parser.feed(l),
  );
  if (!r.ok) return unread(b, { ...r.error, command });
  const p = parser.finish();
  if (!p.ok) return unread(b, { kind: "garbage", message: `${command}: ${p.error}`, command });
  return p.value;
}

/**
 * An nf_tables backend under the generation gate: at 10,000 Services iptables-nft-save costs ~2 s of
 * kernel CPU even when it prints a few rules (the kernel's chain dump walks kube-proxy's 110,000
 * chains of the same family), yet nothing it prints can change without the generation moving.
 */
async function readOrReuse(ctx: ProbeContext, b: Backend): Promise<IptablesBackendFacts> {
  if (b.source === undefined) return readBackend(ctx, b);
  const r = await gatedRead(ctx, b.source, [], async () => {
    const f = await readBackend(ctx, b);
    return f.read ? { ok: true, value: f } : { ok: false, error: f.why };
  });
  return r.ok ? r.value : unread(b, r.error);
}

// All four *-save tools: a node can carry state in both backends at once (a kubelet or CNI on
// legacy next to kube-proxy on nft), and the leftovers of one mode may sit in the other backend.
export const iptablesProbe = defineProbe("iptables", {
  async run(ctx) {
    const backends: IptablesBackendFacts[] = [];
    for (const b of BACKENDS) backends.push(await readOrReuse(ctx, b));
    const unreadOnes = backends.filter((b) => !b.read);
    const commands = BACKENDS.map((b) => `${b.tool} -c`).join(", ");
    // A backend we were refused, that hung or that flooded past its cap fails the probe outright. Any
    // other unread backend stays in the facts as unread (the report marks the probe incomplete).
    const untrusted = unreadOnes.find(
      (b) => b.why.kind === "not-permitted" || b.why.kind === "timeout" || b.why.kind === "output-cap",
    );
    if (untrusted !== undefined) {
      return {
        ok: false,
        error: {
          kind: untrusted.why.kind,
          message: `${untrusted.backend} ${untrusted.family} could not be read, so the view of iptables would be partial: ${untrusted.why.message}`,
          command: commands,
        },
      };
    }
    if (unreadOnes.length === backends.length) {
      const kinds = new Set(unreadOnes.map((b) => b.why.kind));
      const [only] = kinds;
      return {
        ok: false,
        error: {
          kind: kinds.size === 1 && only !== undefined ? only : "exec-failed",
          message: `no iptables backend could be read: ${unreadOnes.map((b) => `${b.why.kind}: ${b.why.message}`).join("; ")}`,
          command: commands,
        },
      };
    }
    return { ok: true, facts: { backends } };
  },
});
