import t from "tap";
import { ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";

t.test("changed IPVS timeouts are told; the kernel defaults are not", async (t) => {
  const base = ipvsNode();
  const tuned = judge(
    ipvsNode({ ipvs: { ...base.ipvs!, timeouts: { tcp: 7200, tcpFin: 30, udp: 60 } } }),
    new Map(),
    NOW,
  );
  t.ok(ids(tuned).includes("ipvs-timeouts-set"));
  t.notOk(ids(judge(base, new Map(), NOW)).includes("ipvs-timeouts-set"));
});

const EST = "net.netfilter.nf_conntrack_tcp_timeout_established";
const withConntrack = (value: string | null, tcp = 900) => {
  const base = ipvsNode();
  return ipvsNode({
    ipvs: { ...base.ipvs!, timeouts: { tcp, tcpFin: 120, udp: 300 } },
    sysctls: { values: [{ name: EST, value }] },
  });
};

t.test("at the defaults too: IPVS cuts idle TCP after 900 s, conntrack keeps it for a day", async (t) => {
  const f = judge(withConntrack("86400"), new Map(), NOW).findings.find((x) => x.id === "ipvs-timeouts-set");
  t.equal(f?.severity, "info");
  t.match(f?.title, /idle established TCP connections IPVS cuts after 900 s live up to 86400 s/);
  t.same(f?.evidence, {
    tcpTimeout: null,
    tcpFinTimeout: null,
    udpTimeout: null,
    kernel: "900 120 300",
    ipvsTcpIdleSeconds: 900,
    conntrackTcpEstablishedSeconds: 86400,
  });
});

t.test("conntrack's timeout not read (or not longer): nothing claimed at the defaults", async (t) => {
  t.notOk(ids(judge(withConntrack(null), new Map(), NOW)).includes("ipvs-timeouts-set"));
  t.notOk(ids(judge(withConntrack("600"), new Map(), NOW)).includes("ipvs-timeouts-set"));
  // Tuned, conntrack unread: still raised, the conntrack side said as not read.
  const tuned = judge(withConntrack(null, 7200), new Map(), NOW).findings.find(
    (x) => x.id === "ipvs-timeouts-set",
  );
  t.equal(tuned?.evidence.conntrackTcpEstablishedSeconds, "not read");
});
