import { excerpt } from "../parse/result.js";
import { SysctlFacts } from "../facts/host.js";
import { readTextFile } from "../../common/regular-file.js";
import { defineProbe } from "./types.js";

/**
 * The sysctls the migration touches: strictARP's arp_ignore/arp_announce (left set after ipvs mode),
 * nf_conntrack_tcp_be_liberal (what --conntrack-tcp-be-liberal sets), nf_conntrack_tcp_timeout_established
 * (how long an idle established flow lives once IPVS no longer cuts it; kube-proxy sets it in every mode,
 * cmd/kube-proxy/app/server_linux.go v1.34.4, 24 h by default), route_localnet (iptables mode
 * sets it for localhost NodePorts), ip_forward, and the three ipvs mode sets on start (which, like
 * the IPVS table, outlive it). Absent files read as null: module not loaded, or no such kernel feature.
 */
const SYSCTLS = [
  "net.ipv4.conf.all.arp_ignore",
  "net.ipv4.conf.all.arp_announce",
  "net.ipv4.conf.all.route_localnet",
  "net.ipv4.ip_forward",
  "net.netfilter.nf_conntrack_tcp_be_liberal",
  "net.netfilter.nf_conntrack_tcp_timeout_established",
  "net.ipv4.vs.conntrack",
  "net.ipv4.vs.expire_nodest_conn",
  "net.ipv4.vs.expire_quiescent_template",
] as const;

// Values are per network namespace: procRoot must be read from the host's (the pod is hostNetwork).
export const sysctlsProbe = defineProbe("sysctls", {
  async run(ctx) {
    const values: SysctlFacts["values"] = [];
    for (const name of SYSCTLS) {
      const path = `${ctx.procRoot}/sys/${name.replace(/\./g, "/")}`;
      const r = await readTextFile(path, 4096);
      if (r.ok) {
        // Each of these is one integer; anything else is not a sysctl read, and must not be served as one.
        const value = r.text.trim();
        if (!/^-?\d{1,20}$/.test(value)) {
          return {
            ok: false,
            error: {
              kind: "garbage",
              message: `${path} is not an integer: ${excerpt(value)}`,
              command: path,
            },
          };
        }
        values.push({ name, value });
      } else if (r.missing) values.push({ name, value: null });
      else return { ok: false, error: r.error };
    }
    return { ok: true, facts: { values } };
  },
});
