import { IpvsFacts } from "../facts/ipvs.js";
import { readTextFile } from "../io/files.js";
import { readIpvsTable } from "../io/ipvs-table.js";
import { parseIpvsStats } from "../parse/ipvs-stats.js";
import { parseIpvsadmTimeout } from "../parse/ipvsadm-timeout.js";
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
// other than the one the findings were judged on.
export const ipvsProbe = defineProbe("ipvs", {
  async run(ctx) {
    const forParity = ctx.parity != null;
    const r = await readIpvsTable(ctx.procRoot, forParity ? { collectRealServers: true } : {});
    if (!r.ok) return r;
    if (!r.available) {
      return {
        ok: true,
        facts: {
          available: false,
          virtualServerCount: 0,
          realServerCount: 0,
          schedulers: {},
          virtualServers: [],
          timeouts: null,
        },
      };
    }
    const t = r.table;
    if (forParity && ctx.shared) ctx.shared.ipvsTable = t;
    return {
      ok: true,
      facts: {
        available: true,
        virtualServerCount: t.virtualServers.length,
        realServerCount: t.realServerCount,
        schedulers: t.schedulers,
        virtualServers: t.virtualServers,
        ...(await readTimeouts(ctx)),
        ...(await readStats(ctx)),
      },
    };
  },
});
