# Guest side of test/helpers/uml/record-ipvs-stats.ts: records /proc/net/ip_vs_stats (the per-namespace
# IPVS traffic totals) with and without traffic through a virtual server.
# Usage (inside the guest): sh record-ipvs-stats.sh OUTDIR MODULE...
set -eu
OUT=$1
shift
. "$(dirname "$0")/guest-lib.sh"
proxyscope_load_modules "$@"
rm -rf "$OUT/stats"

# idle: IPVS loaded, one virtual server, nothing sent through it.
proxyscope_netns idle
ip netns exec idle ipvsadm -A -t 10.96.0.1:443 -s rr
ip netns exec idle ipvsadm -a -t 10.96.0.1:443 -r 10.244.0.2:6443 -m -w 1
mkdir -p "$OUT/stats/idle/proc/net"
sleep 3
ip netns exec idle cat /proc/net/ip_vs_stats >"$OUT/stats/idle/proc/net/ip_vs_stats"

# traffic: a ClusterIP on kube-ipvs0 whose real server is a listener on the node address, ten
# connections each sending 1000 bytes and reading 100 back, then a wait past the estimator's 2 s tick
# (the totals in ip_vs_stats are what the estimator last summed).
proxyscope_netns traffic
ip -n traffic link add eth0 type dummy
ip -n traffic addr add 172.18.0.10/16 dev eth0
ip -n traffic link set eth0 up
ip -n traffic link add kube-ipvs0 type dummy
ip -n traffic addr add 10.96.143.30/32 dev kube-ipvs0
ip netns exec traffic ipvsadm -A -t 10.96.143.30:80 -s rr
ip netns exec traffic ipvsadm -a -t 10.96.143.30:80 -r 172.18.0.10:8080 -m -w 1
ip netns exec traffic node -e '
  const net = require("node:net");
  const srv = net.createServer((s) => { s.on("data", () => {}); s.end(Buffer.alloc(100, 98)); });
  srv.listen(8080, "172.18.0.10", async () => {
    for (let i = 0; i < 10; i++) {
      await new Promise((ok, fail) => {
        const c = net.connect(80, "10.96.143.30", () => c.write(Buffer.alloc(1000, 97)));
        c.on("data", () => {});
        c.on("end", () => { c.end(); ok(); });
        c.on("error", fail);
      });
    }
    srv.close();
    console.log("sent");
  });
' >"$PROXYSCOPE_WORKDIR/stats.log" 2>&1
sleep 5
mkdir -p "$OUT/stats/traffic/proc/net"
ip netns exec traffic cat /proc/net/ip_vs_stats >"$OUT/stats/traffic/proc/net/ip_vs_stats"
ip netns exec traffic cat /proc/net/ip_vs >"$OUT/stats/traffic/proc/net/ip_vs"
cat "$PROXYSCOPE_WORKDIR/stats.log"
