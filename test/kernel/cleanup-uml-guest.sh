# Guest side of test/kernel/cleanup-uml.test.ts: runs inside User-Mode Linux (kernel 6.1) as root,
# cwd = the repository, one network namespace per scenario. Every agent run leaves
# $OUT/<scenario>.<step>.{out,err,rc}; state dumps are $OUT/<scenario>.<when>.state.
set -u
. test/helpers/uml/guest-lib.sh
OUT=${PROXYSCOPE_OUT:?}
FIX=test/fixtures/netfilter/sources

# The node's interface (a veth end standing in for eth0), with an address in 192.168.77.0/24.
node_net() {
  proxyscope_netns "$1"
  # No duplicate address detection: a link-local address leaving "tentative" on its own would look
  # like a change in the before/after comparison of kernel state.
  ip netns exec "$1" sysctl -qw net.ipv6.conf.default.accept_dad=0 net.ipv6.conf.all.accept_dad=0
  ip -n "$1" link add eth0 type veth peer name eth1
  ip -n "$1" addr add 192.168.77.2/24 dev eth0
  ip -n "$1" link set eth0 up
  ip -n "$1" link set eth1 up
}

# kube-ipvs0 holding ClusterIPs, kube-proxy's ipsets, kubelet's and ipvs mode's iptables-legacy
# chains, strictARP: what ipvs mode leaves when nothing cleans up after it.
ipvs_leftovers() {
  ip -n "$1" link add kube-ipvs0 type dummy
  for a in 10.96.0.1 10.96.0.10 172.30.0.41; do ip -n "$1" addr add "$a/32" dev kube-ipvs0; done
  ip netns exec "$1" ipset restore <"$FIX/ipvs-mode.ipset"
  ip netns exec "$1" iptables-legacy-restore --noflush <"$FIX/kubelet.rules"
  ip netns exec "$1" iptables-legacy-restore --noflush <"$FIX/kube-proxy-ipvs-mode.rules"
  ip netns exec "$1" sysctl -qw net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2
}

vs() { ip netns exec "$1" ipvsadm -A "$2" "$3" -s rr; }
# kube-proxy records every ClusterIP:port it serves in KUBE-CLUSTER-IP (pkg/proxy/ipvs/proxier.go): the
# address:port cleanup needs before it deletes a Service's virtual server (kube-ipvs0 proves no port).
cluster_ip() { ip netns exec "$1" ipset add KUBE-CLUSTER-IP "$2"; }

# A kube-proxy stand-in answering $2's mode; sets KP_ARGS to the agent's flags for it.
# It runs as a copy of node named kube-proxy: cleanup --apply accepts only a listener that is kube-proxy.
kube_proxy() {
  [ -x "$OUT/kube-proxy" ] || cp "$(command -v node)" "$OUT/kube-proxy"
  ip netns exec "$1" "$OUT/kube-proxy" dist/test/standins/kube-proxy.js "$OUT/$2.json" >"$TMPDIR/$1.kp" 2>&1 &
  kp_pid=$!
  # Ready is its "ready" line, or its exit: no count of tries a loaded machine can use up.
  while ! grep -q '^ready' "$TMPDIR/$1.kp" 2>/dev/null; do
    kill -0 "$kp_pid" 2>/dev/null || { echo "stand-in in $1 exited before it was ready"; cat "$TMPDIR/$1.kp"; return 1; }
    sleep 0.1
  done
  set -- $(grep '^ready' "$TMPDIR/$1.kp")
  KP_ARGS="--kube-proxy-metrics-url http://127.0.0.1:$2 --kube-proxy-health-url http://127.0.0.1:$3"
}

# agent NS STEP ARGS...: runs the built agent in the namespace, keeping stdout, stderr and status.
agent() {
  ns=$1; step=$2; shift 2
  eval "kp=\$KP_$ns"
  # Unhurried deadlines: nothing here hangs, and a guest on a loaded host missed 10 s reads.
  # shellcheck disable=SC2086
  ip netns exec "$ns" node dist/agent/cli.js "$@" --node "$ns" --node-ip 192.168.77.2 $kp \
    --call-timeout-ms 60000 --probe-timeout-ms 120000 \
    >"$OUT/$ns.$step.out" 2>"$OUT/$ns.$step.err"
  echo $? >"$OUT/$ns.$step.rc"
}

# Everything cleanup could touch, without counters and timestamps (the agent's own HTTP moves them).
state() {
  {
    ip netns exec "$1" ipvsadm -Ln
    ip -n "$1" -d addr show
    ip netns exec "$1" ipset list
    ip netns exec "$1" iptables-legacy-save
    ip netns exec "$1" ip6tables-legacy-save
    ip netns exec "$1" sysctl net.ipv4.conf.all.arp_ignore net.ipv4.conf.all.arp_announce
  } 2>&1 | grep -v '^#' | sed 's/ *\[[0-9]*:[0-9]*\]//g' >"$OUT/$1.$2.state"
}

# blackhole: kube-proxy answers nftables; ipvs mode's leftovers, one Service still in IPVS.
node_net blackhole
ipvs_leftovers blackhole
vs blackhole -t 10.96.0.1:443
cluster_ip blackhole 10.96.0.1,tcp:443
kube_proxy blackhole nftables && KP_blackhole=$KP_ARGS
agent blackhole verify-before verify --sync-window-s 0 --service-address 10.96.0.10:443
state blackhole before
agent blackhole dry-run cleanup --strict-arp
state blackhole after-dry-run
agent blackhole apply cleanup --apply --strict-arp
state blackhole after-apply
agent blackhole scan-after scan --json
agent blackhole verify-after verify --sync-window-s 0 --skip-connect

# ipvs: kube-proxy still answers ipvs; the same state is in use, so --apply must refuse.
node_net ipvs
ipvs_leftovers ipvs
vs ipvs -t 10.96.0.1:443
cluster_ip ipvs 10.96.0.1,tcp:443
vs ipvs -t 192.168.77.2:30080
kube_proxy ipvs ipvs && KP_ipvs=$KP_ARGS
state ipvs before
agent ipvs apply cleanup --apply --strict-arp
state ipvs after-apply
agent ipvs verify verify --sync-window-s 0 --skip-connect

# silent: no kube-proxy answering at all: the mode cannot be told, so --apply must refuse.
node_net silent
ipvs_leftovers silent
KP_silent="--kube-proxy-metrics-url http://127.0.0.1:9 --kube-proxy-health-url http://127.0.0.1:9"
state silent before
agent silent apply cleanup --apply
state silent after-apply

# foreign: kubelet's chains, a user chain and built-in rules jumping into kube-proxy's chains, and a
# keepalived-style VIP in IPVS next to kube-proxy's virtual servers.
node_net foreign
ipvs_leftovers foreign
ip -n foreign addr add 192.168.77.10/32 dev eth0
ip netns exec foreign iptables-legacy-restore --noflush <"$FIX/foreign-jump.rules"
vs foreign -t 10.96.0.1:443
ip netns exec foreign ipvsadm -a -t 10.96.0.1:443 -r 192.168.77.3:6443 -m
vs foreign -u 10.96.0.10:53
cluster_ip foreign 10.96.0.1,tcp:443
cluster_ip foreign 10.96.0.10,udp:53
vs foreign -t 192.168.77.2:30080
vs foreign -t 192.168.77.10:80
ip netns exec foreign ipvsadm -a -t 192.168.77.10:80 -r 192.168.77.20:80 -m
kube_proxy foreign nftables && KP_foreign=$KP_ARGS
state foreign before
agent foreign apply cleanup --apply --json
state foreign after-apply
agent foreign verify-after verify --sync-window-s 0 --skip-connect --json
# keepalived: kube-ipvs0 already deleted, kube-proxy's own 10.96.0.1:443 (masqueraded, in
# KUBE-CLUSTER-IP) next to a keepalived VIP on a node address in the NodePort range (wlc, direct routing).
node_net keepalived
ipvs_leftovers keepalived
ip netns exec keepalived ipset add KUBE-CLUSTER-IP 10.96.0.1,tcp:443
ip -n keepalived link delete kube-ipvs0
vs keepalived -t 10.96.0.1:443
ip netns exec keepalived ipvsadm -a -t 10.96.0.1:443 -r 192.168.77.3:6443 -m
ip -n keepalived addr add 192.168.77.50/32 dev eth0
ip netns exec keepalived ipvsadm -A -t 192.168.77.50:30500 -s wlc
ip netns exec keepalived ipvsadm -a -t 192.168.77.50:30500 -r 192.168.77.60:30500 -g
ip netns exec keepalived ipvsadm -a -t 192.168.77.50:30500 -r 192.168.77.61:30500 -g
# kube-proxy's left-over NodePort 30080 (in KUBE-NODE-PORT-TCP) on the node's address, and keepalived's
# NAT virtual server on its VIP on the same port: both masquerade, both on a local address.
vs keepalived -t 192.168.77.2:30080
ip netns exec keepalived ipvsadm -a -t 192.168.77.2:30080 -r 10.244.1.5:8080 -m
vs keepalived -t 192.168.77.50:30080
ip netns exec keepalived ipvsadm -a -t 192.168.77.50:30080 -r 192.168.77.60:8080 -m
KP_keepalived="--kube-proxy-metrics-url http://127.0.0.1:9 --kube-proxy-health-url http://127.0.0.1:9"
agent keepalived dry-run cleanup --json
echo guest-done
