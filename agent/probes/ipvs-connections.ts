import { readIpvsConnTable } from "../io/ipvs-conn-table.js";
import { defineProbe } from "./types.js";

// IPVS's connection table, counted per virtual address: the connections nftables mode's start cuts
// (it flushes IPVS, and IPVS did the NAT for them itself). Its own probe, with its own deadline: on a
// busy node this table is far longer than /proc/net/ip_vs, and a slow read must not cost the IPVS table.
// Reading /proc loads no module: the file only exists while ip_vs is loaded.
export const ipvsConnectionsProbe = defineProbe("ipvs-connections", {
  async run(ctx) {
    return readIpvsConnTable(ctx.procRoot);
  },
});
