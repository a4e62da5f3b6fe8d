import t from "tap";
import { readFileSync } from "node:fs";
import { staleBuild } from "../helpers/built.js";
import { bootUml, hostScratchDir, umlRunsHere, umlUnavailableReason } from "../helpers/uml.js";

// A loaded 2-core machine slows a UML guest several times over (see ipvs-uml.test.ts).
t.setTimeout(1_200_000);

// ipvs-connections-cut-at-switch on a real kernel: one UML boot, a node namespace as kube-proxy's ipvs mode
// leaves it (ClusterIPs on kube-ipvs0, a NodePort, a keepalived-style VIP that is no Service), connections
// held open through them by a program in the guest while the real probes read the tables and the real
// rules judge them; then the same node after the program closed them.
const GUEST = `
set -eu
. test/helpers/uml/guest-lib.sh
in1() { ip netns exec node1 "$@"; }
proxyscope_netns node1
ip -n node1 link add eth0 type dummy
ip -n node1 addr add 172.18.0.10/16 dev eth0
ip -n node1 addr add 192.168.50.100/32 dev eth0
ip -n node1 link set eth0 up
ip -n node1 link add kube-ipvs0 type dummy
ip -n node1 addr add 10.96.143.30/32 dev kube-ipvs0
in1 ipvsadm -A -t 10.96.143.30:80 -s rr
in1 ipvsadm -a -t 10.96.143.30:80 -r 172.18.0.10:8080 -m -w 1
in1 ipvsadm -A -t 172.18.0.10:30080 -s rr
in1 ipvsadm -a -t 172.18.0.10:30080 -r 172.18.0.10:8080 -m -w 1
in1 ipvsadm -A -t 192.168.50.100:80 -s wlc
in1 ipvsadm -a -t 192.168.50.100:80 -r 172.18.0.10:8080 -m -w 1
in1 node -e '
  const net = require("node:net");
  const fs = require("node:fs");
  const held = [];
  const srv = net.createServer((s) => { held.push(s); s.on("error", () => {}); });
  const open = (port, host) => new Promise((ok, fail) => {
    const c = net.connect(port, host, () => ok(c));
    c.on("error", fail);
  });
  srv.listen(8080, "172.18.0.10", async () => {
    const keep = [];
    for (let i = 0; i < 4; i++) keep.push(await open(80, "10.96.143.30"));
    for (let i = 0; i < 2; i++) keep.push(await open(30080, "172.18.0.10"));
    keep.push(await open(80, "192.168.50.100"));
    fs.writeFileSync(process.env.TMPDIR + "/held", "");
    const wait = setInterval(() => {
      if (!fs.existsSync(process.env.TMPDIR + "/release")) return;
      clearInterval(wait);
      for (const c of [...keep, ...held]) c.destroy();
      srv.close();
    }, 100);
  });
' >"$OUT/holder.log" 2>&1 &
i=0
while [ ! -e "$TMPDIR/held" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
in1 node test/kernel/ipvs-connections-driver.mjs "$OUT/live.json"
touch "$TMPDIR/release"
wait
in1 node test/kernel/ipvs-connections-driver.mjs "$OUT/closed.json"
echo guest done
`;

const reason = umlUnavailableReason();
if (reason !== null) {
  t.fail(`User-Mode Linux is needed for this test and does not skip silently: ${reason}`);
} else if (umlRunsHere(t)) {
  const stale = staleBuild([
    "agent/probes/ipvs-connections.ts",
    "agent/parse/ipvs-conn.ts",
    "agent/view/ipvs-connections.ts",
    "agent/rules/before/ipvs-connections-cut-at-switch.ts",
  ]);
  t.equal(stale, null, "dist/ is built and current");
  const out = hostScratchDir("proxyscope-ipvs-conn-uml-");
  t.teardown(out.remove);
  const boot = await bootUml({ script: GUEST, env: { OUT: out.path }, timeoutMs: 900_000 });
  t.equal(boot.exitCode, 0, `guest script:\n${boot.output}`);
  const read = (n: string) => JSON.parse(readFileSync(`${out.path}/${n}.json`, "utf8"));

  t.test("connections held open: counted for kube-proxy's virtual servers, drain first", async (t) => {
    const r = read("live");
    t.ok(r.runs.ipvsConnections.ok, JSON.stringify(r.runs.ipvsConnections.error));
    t.match(r.runs.ipvsConnections.facts, { available: true, established: 7 });
    // 4 to the ClusterIP, 2 to the NodePort; the VIP's one is not kube-proxy's.
    t.match(r.view, { established: 6, virtualServers: 2 });
    const f = r.findings.find((x: { id: string }) => x.id === "ipvs-connections-cut-at-switch");
    t.match(f, { severity: "warning", evidence: { established: 6 } });
    t.match(f?.remedy, /kubectl drain/);
    t.not(r.verdict, "ready");
  });

  t.test("the same node once the connections closed: nothing established, no finding", async (t) => {
    const r = read("closed");
    t.ok(r.runs.ipvsConnections.ok);
    t.equal(r.runs.ipvsConnections.facts.established, 0);
    t.equal(r.view.established, 0);
    t.notOk(r.findings.some((x: { id: string }) => x.id === "ipvs-connections-cut-at-switch"));
  });
}
