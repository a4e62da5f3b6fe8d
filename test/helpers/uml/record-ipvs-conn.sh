# Guest side of test/helpers/uml/record-ipvs-conn.ts: records /proc/net/ip_vs_conn (IPVS's own
# connection table) while connections through kube-proxy-like virtual servers are open, closed and
# half-open, beside the /proc/net/ip_vs they belong to.
# Usage (inside the guest): sh record-ipvs-conn.sh OUTDIR MODULE...
set -eu
OUT=$1
shift
. "$(dirname "$0")/guest-lib.sh"
proxyscope_load_modules "$@"
rm -rf "$OUT/conn"

# idle: IPVS loaded, one virtual server, no connection ever made: the header only.
proxyscope_netns idle
ip netns exec idle ipvsadm -A -t 10.96.0.1:443 -s rr
ip netns exec idle ipvsadm -a -t 10.96.0.1:443 -r 10.244.0.2:6443 -m -w 1
mkdir -p "$OUT/conn/idle/proc/net"
ip netns exec idle cat /proc/net/ip_vs_conn >"$OUT/conn/idle/proc/net/ip_vs_conn"
ip netns exec idle cat /proc/net/ip_vs >"$OUT/conn/idle/proc/net/ip_vs"

# live: a node in ipvs mode. ClusterIPs on kube-ipvs0 (TCP 80, UDP 53, IPv6 TCP 80, a ClientIP-affinity
# TCP 8443 with -p 10800), a NodePort on the node address (172.18.0.10:30080), and a keepalived-style
# VIP that is no Service (192.168.50.100:80). Every real server is a listener on the node itself.
proxyscope_netns live
ip -n live link add eth0 type dummy
ip -n live addr add 172.18.0.10/16 dev eth0
ip -n live addr add fd00:18::10/64 dev eth0 nodad
ip -n live link set eth0 up
ip -n live link add kube-ipvs0 type dummy
ip -n live addr add 10.96.143.30/32 dev kube-ipvs0
ip -n live addr add 10.96.0.10/32 dev kube-ipvs0
ip -n live addr add 10.96.143.31/32 dev kube-ipvs0
ip -n live addr add fd00:10:96::1e/128 dev kube-ipvs0 nodad
ip -n live addr add 192.168.50.100/32 dev eth0
ip netns exec live ipvsadm -A -t 10.96.143.30:80 -s rr
ip netns exec live ipvsadm -a -t 10.96.143.30:80 -r 172.18.0.10:8080 -m -w 1
ip netns exec live ipvsadm -A -u 10.96.0.10:53 -s rr
ip netns exec live ipvsadm -a -u 10.96.0.10:53 -r 172.18.0.10:5353 -m -w 1
ip netns exec live ipvsadm -A -t [fd00:10:96::1e]:80 -s rr
ip netns exec live ipvsadm -a -t [fd00:10:96::1e]:80 -r [fd00:18::10]:8080 -m -w 1
ip netns exec live ipvsadm -A -t 10.96.143.31:8443 -s rr -p 10800
ip netns exec live ipvsadm -a -t 10.96.143.31:8443 -r 172.18.0.10:8080 -m -w 1
ip netns exec live ipvsadm -A -t 172.18.0.10:30080 -s rr
ip netns exec live ipvsadm -a -t 172.18.0.10:30080 -r 172.18.0.10:8080 -m -w 1
ip netns exec live ipvsadm -A -t 192.168.50.100:80 -s wlc
ip netns exec live ipvsadm -a -t 192.168.50.100:80 -r 172.18.0.10:8080 -m -w 1
mkdir -p "$OUT/conn/live/proc/net"
# The node program holds its connections open until the files are written (it waits for a file).
ip netns exec live node -e '
  const net = require("node:net");
  const dgram = require("node:dgram");
  const fs = require("node:fs");
  const held = [];
  const srv = net.createServer((s) => { held.push(s); s.on("data", () => {}); s.on("error", () => {}); });
  const srv6 = net.createServer((s) => { held.push(s); s.on("data", () => {}); s.on("error", () => {}); });
  const udp = dgram.createSocket("udp4");
  udp.on("message", (m, r) => udp.send(m, r.port, r.address));
  const open = (port, host) => new Promise((ok, fail) => {
    const c = net.connect(port, host, () => { c.write("x"); ok(c); });
    c.on("error", fail);
  });
  udp.bind(5353, "172.18.0.10", () => srv.listen(8080, "172.18.0.10", () => srv6.listen(8080, "fd00:18::10", async () => {
    const keep = [];
    for (let i = 0; i < 3; i++) keep.push(await open(80, "10.96.143.30"));
    for (let i = 0; i < 2; i++) keep.push(await open(30080, "172.18.0.10"));
    keep.push(await open(80, "fd00:10:96::1e"));
    keep.push(await open(8443, "10.96.143.31"));
    keep.push(await open(80, "192.168.50.100"));
    // Two connections closed again: IPVS keeps their entries (FIN_WAIT/TIME_WAIT) until they expire.
    for (let i = 0; i < 2; i++) {
      const c = await open(80, "10.96.143.30");
      await new Promise((ok) => { c.on("close", ok); c.end(); setTimeout(() => c.destroy(), 200); });
    }
    const client = dgram.createSocket("udp4");
    await new Promise((ok) => { client.on("message", ok); client.send("q", 53, "10.96.0.10"); });
    fs.writeFileSync(process.env.TMPDIR + "/conn-ready", "");
    const wait = setInterval(() => {
      if (!fs.existsSync(process.env.TMPDIR + "/conn-done")) return;
      clearInterval(wait);
      for (const c of [...keep, ...held]) c.destroy();
      client.close(); udp.close(); srv.close(); srv6.close();
    }, 100);
  })));
' >"$PROXYSCOPE_WORKDIR/conn.log" 2>&1 &
i=0
while [ ! -e "$TMPDIR/conn-ready" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
sleep 1
ip netns exec live cat /proc/net/ip_vs_conn >"$OUT/conn/live/proc/net/ip_vs_conn"
ip netns exec live cat /proc/net/ip_vs >"$OUT/conn/live/proc/net/ip_vs"
ip netns exec live ipvsadm -L -n -c >"$OUT/conn/live/ipvsadm-L-n-c.txt"
touch "$TMPDIR/conn-done"
wait
cat "$PROXYSCOPE_WORKDIR/conn.log"
