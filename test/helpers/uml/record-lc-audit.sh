#!/bin/sh
# Records what `lc` really does: two client nodes (network namespaces) each with kube-proxy-like IPVS
# state for one Service (10.107.44.9:8080, scheduler lc, two endpoints in a third namespace), each
# opening real TCP connections through its own IPVS table; then each node's /proc/net/ip_vs.
# Run in a UML guest by record-lc-audit.ts. $1: the output folder (on the host).
set -eu
. test/helpers/uml/guest-lib.sh
OUT=$1

proxyscope_netns pods
for a in 10.244.1.7 10.244.2.4; do ip -n pods addr add $a/32 dev lo; done

i=0
for node in node-1 node-2; do
  i=$((i + 1))
  proxyscope_netns $node
  ip link add eth0 netns $node type veth peer name to-$node netns pods
  ip -n $node addr add 172.18.0.$i/24 dev eth0
  ip -n pods addr add 172.18.$i.254/32 dev to-$node
  ip -n $node link set eth0 up
  ip -n pods link set to-$node up
  ip -n pods route add 172.18.0.$i/32 dev to-$node
  ip -n $node route add 10.244.0.0/16 dev eth0
  ip -n $node link add kube-ipvs0 type dummy
  ip -n $node addr add 10.107.44.9/32 dev kube-ipvs0
  ip netns exec $node sysctl -qw net.ipv4.vs.conntrack=1
  ip netns exec $node ipvsadm -A -t 10.107.44.9:8080 -s lc
  ip netns exec $node ipvsadm -a -t 10.107.44.9:8080 -r 10.244.1.7:8080 -m -w 1
  ip netns exec $node ipvsadm -a -t 10.107.44.9:8080 -r 10.244.2.4:8080 -m -w 1
done

# The endpoints: one TCP server holding every connection open.
ip netns exec pods node -e '
  const net = require("node:net");
  const held = [];
  net.createServer((s) => held.push(s)).listen(8080, "0.0.0.0", () => console.log("pods listening"));
' > "$OUT/.pods.log" 2>&1 &
i=0
until grep -q listening "$OUT/.pods.log"; do i=$((i + 1)); [ $i -lt 100 ] || exit 1; sleep 0.2; done

# Clients: node-1 opens 5 connections and closes 2 of them; node-2 opens 2. Each node's lc decides
# from its own table only.
client() {
  ip netns exec "$1" node -e '
    const net = require("node:net");
    const [open, close, local] = [Number(process.argv[1]), Number(process.argv[2]), process.argv[3]];
    const socks = [];
    let n = 0;
    const next = () => {
      if (n === open) {
        for (const s of socks.slice(0, close)) s.destroy();
        setTimeout(() => console.log("held", open - close), 500);
        return;
      }
      n++;
      // From the node address: a socket left to choose would take the VIP itself (it is local
      // on kube-ipvs0), which the endpoints cannot answer without the masquerade rules of kube-proxy.
      const s = net.connect({ port: 8080, host: "10.107.44.9", localAddress: local }, next);
      s.on("error", (e) => { console.error(e.message); process.exit(1); });
      socks.push(s);
    };
    next();
    setInterval(() => {}, 1000);
  ' "$2" "$3" "$4" > "$OUT/.client-$1.log" 2>&1 &
}
client node-1 5 2 172.18.0.1
client node-2 2 0 172.18.0.2
for node in node-1 node-2; do
  i=0
  until grep -q held "$OUT/.client-$node.log"; do i=$((i + 1)); [ $i -lt 100 ] || exit 1; sleep 0.2; done
done

for node in node-1 node-2; do
  mkdir -p "$OUT/$node/proc/net"
  ip netns exec $node cat /proc/net/ip_vs > "$OUT/$node/proc/net/ip_vs"
  ip netns exec $node ipvsadm -L -n > "$OUT/$node/ipvsadm-L-n.txt"
  echo "== $node"; cat "$OUT/$node/ipvsadm-L-n.txt"
done
for f in "$OUT"/.client-*.log "$OUT/.pods.log"; do echo "== $f"; cat "$f"; done
rm -f "$OUT"/.client-*.log "$OUT/.pods.log"
