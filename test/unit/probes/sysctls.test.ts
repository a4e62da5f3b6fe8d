import t from "tap";
import { sysctlsProbe } from "../../../agent/probes/sysctls.js";
import { probeContext, tree } from "../../helpers/probe-context.js";

// The host sysctls the guide checks, read from /proc/sys.

t.test("sysctls: values, null for absent files", async (t) => {
  const proc = tree(t, {
    sys: {
      net: {
        ipv4: {
          conf: { all: { arp_ignore: "1\n", arp_announce: "2\n", route_localnet: "0\n" } },
          ip_forward: "1\n",
        },
        netfilter: { nf_conntrack_tcp_be_liberal: "0\n", nf_conntrack_tcp_timeout_established: "86400\n" },
      },
    },
  });
  t.same(await sysctlsProbe.run(probeContext({ procRoot: proc })), {
    ok: true,
    facts: {
      values: [
        { name: "net.ipv4.conf.all.arp_ignore", value: "1" },
        { name: "net.ipv4.conf.all.arp_announce", value: "2" },
        { name: "net.ipv4.conf.all.route_localnet", value: "0" },
        { name: "net.ipv4.ip_forward", value: "1" },
        { name: "net.netfilter.nf_conntrack_tcp_be_liberal", value: "0" },
        { name: "net.netfilter.nf_conntrack_tcp_timeout_established", value: "86400" },
        { name: "net.ipv4.vs.conntrack", value: null },
        { name: "net.ipv4.vs.expire_nodest_conn", value: null },
        { name: "net.ipv4.vs.expire_quiescent_template", value: null },
      ],
    },
  });
});
