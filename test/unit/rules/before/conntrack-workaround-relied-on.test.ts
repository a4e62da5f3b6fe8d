import t from "tap";
import { ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";
import { configz } from "../../../helpers/facts.js";

const liberal = (v: string) => ({
  values: [{ name: "net.netfilter.nf_conntrack_tcp_be_liberal", value: v }],
});

t.test("nf_conntrack_tcp_be_liberal=1 before the switch is told; 0 is not", async (t) => {
  t.ok(
    ids(judge(ipvsNode({ sysctls: liberal("1") }), new Map(), NOW)).includes(
      "conntrack-workaround-relied-on",
    ),
  );
  t.notOk(
    ids(judge(ipvsNode({ sysctls: liberal("0") }), new Map(), NOW)).includes(
      "conntrack-workaround-relied-on",
    ),
  );
});

// kube-proxy's own conntrack.tcpBeLiberal (KubeProxyConntrackConfiguration.TCPBeLiberal) sets the
// sysctl in every mode (cmd/kube-proxy/app/server_linux.go), so the switch loses nothing: not relied on.
t.test(
  "be_liberal set by kube-proxy's own config is seen, not counted; unread config still counts",
  async (t) => {
    const own = judge(
      ipvsNode({ sysctls: liberal("1"), configz: configz({ conntrackTcpBeLiberal: true }) }),
      new Map(),
      NOW,
    );
    t.notOk(ids(own).includes("conntrack-workaround-relied-on"));
    t.match(own.view.notCounted, [
      { check: "conntrack-workaround-relied-on", why: /conntrack\.tcpBeLiberal: true/ },
    ]);
    const notSet = judge(
      ipvsNode({ sysctls: liberal("1"), configz: configz({ conntrackTcpBeLiberal: false }) }),
      new Map(),
      NOW,
    );
    t.ok(ids(notSet).includes("conntrack-workaround-relied-on"), "set by hand: kube-proxy will not carry it");
    const unread = judge(ipvsNode({ sysctls: liberal("1"), configz: null }), new Map(), NOW);
    t.ok(ids(unread).includes("conntrack-workaround-relied-on"), "config not read: never taken as set");
  },
);
