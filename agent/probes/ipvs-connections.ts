import type { IpvsConnectionsFacts } from "../facts/ipvs-connections.js";
import { readIpvsConnTable } from "../io/ipvs-conn-table.js";
import { defineProbe } from "./types.js";

// IPVS's connection table, counted per virtual address: the connections nftables mode's start cuts
// (it flushes IPVS, and IPVS did the NAT for them itself). Its own probe, with its own deadline: on a
// busy node this table is far longer than /proc/net/ip_vs, and a slow read must not cost the IPVS table.
// Reading /proc loads no module: the file only exists while ip_vs is loaded.
// In serve it is read at most every --ipvs-conn-interval-s (~1.2 us of CPU a connection,
// bench/results/ipvs-conn-read.md: a second a scan at a million), and the count in between is the last
// read's, its age in the report's `sources` and in proxyscope_source_age_seconds{source="ipvs-connections"}.
// A failed read is the probe's failure, never the older count.
export const ipvsConnectionsProbe = defineProbe("ipvs-connections", {
  async run(ctx) {
    const cache = ctx.cache ?? null;
    const every = cache?.ipvsConnIntervalMs ?? 0;
    if (cache === null || every <= 0) return readIpvsConnTable(ctx.procRoot);
    const hit = cache.lookupYoungerThan<IpvsConnectionsFacts>("ipvs-connections", every);
    if (hit.hit) {
      ctx.shared?.freshness.push({
        source: "ipvs-connections",
        readAt: new Date(hit.readAtMs).toISOString(),
        ageSeconds: 0,
        reused: true,
        why: `read at most every ${every / 1000} s (--ipvs-conn-interval-s)`,
      });
      return { ok: true, facts: hit.value };
    }
    const started = cache.clock();
    const r = await readIpvsConnTable(ctx.procRoot);
    if (!r.ok) return r;
    cache.storeRead("ipvs-connections", r.facts, started);
    ctx.shared?.freshness.push({
      source: "ipvs-connections",
      readAt: new Date(started).toISOString(),
      ageSeconds: 0,
      reused: false,
      why: hit.why,
    });
    return r;
  },
});
