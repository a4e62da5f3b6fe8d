import { IpvsFacts } from "../facts/ipvs.js";
import { readTextFile } from "../../common/regular-file.js";
import { readIpvsTable } from "../io/ipvs-table.js";
import { parseIpvsStats } from "../parse/ipvs-stats.js";
import { parseIpvsadmTimeout } from "../parse/ipvsadm-timeout.js";
import type { IpvsProcTable } from "../parse/ipvs-proc.js";
import { ipvsGatedRead, type Read } from "./gated-read.js";
import { defineProbe, type ProbeContext } from "./types.js";

async function readTimeouts(ctx: ProbeContext): Promise<Pick<IpvsFacts, "timeouts" | "timeoutsError">> {
  const args = ["-L", "--timeout"];
  const r = await ctx.tools.run("ipvsadm", args, { timeoutMs: ctx.callTimeoutMs, maxBytes: 4096 });
  if (!r.ok) return { timeouts: null, timeoutsError: r.error };
  const p = parseIpvsadmTimeout(r.stdout);
  if (!p.ok) {
    return {
      timeouts: null,
      timeoutsError: { kind: "garbage", message: p.error, command: `ipvsadm ${args.join(" ")}` },
    };
  }
  return { timeouts: p.value };
}

// A missing or garbled totals file costs the totals, never the table.
async function readStats(ctx: ProbeContext): Promise<Pick<IpvsFacts, "stats" | "statsError">> {
  const path = `${ctx.procRoot}/net/ip_vs_stats`;
  const r = await readTextFile(path, 4096);
  if (!r.ok) return { stats: null, statsError: r.error };
  const p = parseIpvsStats(r.text);
  if (!p.ok) return { stats: null, statsError: { kind: "garbage", message: p.error, command: path } };
  return { stats: p.value };
}

// The IPVS table, summarised. ipvsadm is only asked for the timeouts, and only when IPVS is loaded:
// ipvsadm on a kernel without IPVS runs `modprobe ip_vs`, which a read-only audit must not cause.
// With --parity-snapshot the real servers are kept too and the table shared with the parity probe:
// at 10,000 Services one read of /proc/net/ip_vs is ~13 s of CPU in UML (the kernel walks its
// service list again for every page), and reading it a second time also risked a snapshot of a table
// other than the one the findings were judged on. In serve, the table and the timeouts are reused
// while the ipvs-mode gate stands still (gated-read.ts ipvsGatedRead); the report's `sources` says so.
interface IpvsOptions {
  /** --parity-snapshot is set: read the real servers too, fresh, and share the table with parity. */
  forParity: boolean;
}

export const ipvsProbe = defineProbe("ipvs", {
  typedByParser: true,
  async run(ctx, { forParity }: IpvsOptions) {
    // Parity writes a snapshot of this table with its real servers: only ever from a fresh read.
    const r = forParity
      ? await readTable(ctx, true)
      : await ipvsGatedRead(ctx, "ipvs", () => readTable(ctx, false));
    if (!r.ok) return r;
    if (!r.value.facts.available) return { ok: true, facts: r.value.facts };
    if (forParity && ctx.shared && r.value.table) ctx.shared.ipvsTable = r.value.table;
    // The totals are one small file that moves with traffic: read every scan.
    return { ok: true, facts: { ...r.value.facts, ...(await readStats(ctx)) } };
  },
});

type TableRead = { facts: Omit<IpvsFacts, "stats" | "statsError">; table?: IpvsProcTable };

async function readTable(ctx: ProbeContext, forParity: boolean): Promise<Read<TableRead>> {
  const r = await readIpvsTable(ctx.procRoot, forParity ? { collectRealServers: true } : {});
  if (!r.ok) return r;
  if (!r.available) {
    return {
      ok: true,
      value: {
        facts: {
          available: false,
          virtualServerCount: 0,
          realServerCount: 0,
          schedulers: {},
          virtualServers: [],
          timeouts: null,
        },
      },
    };
  }
  const t = r.table;
  return {
    ok: true,
    value: {
      facts: {
        available: true,
        virtualServerCount: t.virtualServers.length,
        realServerCount: t.realServerCount,
        schedulers: t.schedulers,
        virtualServers: t.virtualServers,
        ...(await readTimeouts(ctx)),
      },
      ...(forParity ? { table: t } : {}),
    },
  };
}
