# Guest side of test/kernel/verify-rollback-uml.test.ts: runs inside User-Mode Linux (kernel 6.1) as
# root, cwd = the repository, one network namespace per scenario. kube-proxy (the STAND-IN) answers
# ipvs in each: the node was rolled back. Each verify leaves $OUT/<scenario>.verify.{out,err,rc}.
set -u
. test/helpers/uml/guest-lib.sh
OUT=${PROXYSCOPE_OUT:?}
FIX=test/fixtures/netfilter/sources

# The node: eth0 192.168.77.2 (primary), eth2 192.168.78.2 (a secondary NIC).
node_net() {
  proxyscope_netns "$1"
  ip -n "$1" link add eth0 type veth peer name eth1
  ip -n "$1" addr add 192.168.77.2/24 dev eth0
  ip -n "$1" link add eth2 type veth peer name eth3
  ip -n "$1" addr add 192.168.78.2/24 dev eth2
  for l in eth0 eth1 eth2 eth3; do ip -n "$1" link set "$l" up; done
}

# What ipvs mode builds (pkg/proxy/ipvs/proxier.go): every Service IP on kube-ipvs0 with a masqueraded
# virtual server, every NodePort on each node address, kube-proxy's ipsets (KUBE-NODE-PORT-TCP 30080).
# $2: the kube-ipvs0 addresses; $3: the node addresses that get the NodePort.
ipvs_plane() {
  ip -n "$1" link add kube-ipvs0 type dummy
  for a in $2; do ip -n "$1" addr add "$a/32" dev kube-ipvs0; done
  ip netns exec "$1" ipset restore <"$FIX/ipvs-mode.ipset"
  ip netns exec "$1" ipvsadm -A -t 10.96.0.1:443 -s rr
  ip netns exec "$1" ipvsadm -a -t 10.96.0.1:443 -r 192.168.77.3:6443 -m
  ip netns exec "$1" ipvsadm -A -u 10.96.0.10:53 -s rr
  ip netns exec "$1" ipvsadm -a -u 10.96.0.10:53 -r 10.244.0.5:53 -m
  ip netns exec "$1" ipvsadm -A -t 172.30.0.41:80 -s rr
  ip netns exec "$1" ipvsadm -a -t 172.30.0.41:80 -r 10.180.0.1:80 -m
  for a in $3; do
    ip netns exec "$1" ipvsadm -A -t "$a:30080" -s rr
    ip netns exec "$1" ipvsadm -a -t "$a:30080" -r 10.244.0.6:80 -m
  done
}

kube_proxy() {
  ip netns exec "$1" node dist/test/standins/kube-proxy.js "$OUT/ipvs.json" >"$TMPDIR/$1.kp" 2>&1 &
  kp_pid=$!
  while ! grep -q '^ready' "$TMPDIR/$1.kp" 2>/dev/null; do
    kill -0 "$kp_pid" 2>/dev/null || { echo "stand-in in $1 exited before it was ready"; cat "$TMPDIR/$1.kp"; return 1; }
    sleep 0.1
  done
  set -- $(grep '^ready' "$TMPDIR/$1.kp")
  KP_ARGS="--kube-proxy-metrics-url http://127.0.0.1:$2 --kube-proxy-health-url http://127.0.0.1:$3"
}

verify() {
  kube_proxy "$1" || return 1
  # shellcheck disable=SC2086
  ip netns exec "$1" node dist/agent/cli.js verify --expect-mode ipvs --json --node "$1" \
    --node-ip 192.168.77.2 $KP_ARGS --sync-window-s 0 --skip-connect \
    --call-timeout-ms 60000 --probe-timeout-ms 120000 \
    >"$OUT/$1.verify.out" 2>"$OUT/$1.verify.err"
  echo $? >"$OUT/$1.verify.rc"
  ip netns exec "$1" ipvsadm -Ln >"$OUT/$1.ipvsadm" 2>&1
  ip -n "$1" addr show dev kube-ipvs0 >"$OUT/$1.kube-ipvs0" 2>&1
}

# back: the ipvs data plane is whole again.
node_net back
ipvs_plane back "10.96.0.1 10.96.0.10 172.30.0.41" "192.168.77.2 192.168.78.2"
verify back

# gap: kube-ipvs0 lacks 10.96.0.10, which IPVS still serves; the NodePort is only on the primary.
node_net gap
ipvs_plane gap "10.96.0.1 172.30.0.41" "192.168.77.2"
verify gap

# empty: kube-proxy answers ipvs, but nothing of its data plane is there.
node_net empty
verify empty

echo guest-done
