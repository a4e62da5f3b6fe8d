# Guest side of test/kernel/real-kube-proxy-ipvs-uml.test.ts: runs inside User-Mode Linux (kernel 6.1) as
# root, cwd = the repository, in the guest's own root network namespace (the guest's kernel is its own:
# nothing here reaches the host's). The REAL kube-proxy ($PROXYSCOPE_KP) against the API server stand-in
# on the guest's loopback, switched between modes the way an operator does: stop it, start it again
# with another mode in its config. After each step the agent scans (and verifies where a switch was
# made) and the kernel state is dumped to $OUT/<step>.*.
set -u
. test/helpers/uml/guest-lib.sh
OUT=${PROXYSCOPE_OUT:?}
KP=${PROXYSCOPE_KP:?}
NODE=proxyscope-node
METRICS=127.0.0.1:10249
HEALTH=127.0.0.1:10256
KP_URLS="--kube-proxy-metrics-url http://$METRICS --kube-proxy-health-url http://$HEALTH"
# UML is slow on a busy machine: wide per-call margins, so only a hung tool misses them.
SLOW="--call-timeout-ms 120000 --probe-timeout-ms 240000"

# What kube-proxy execs, as a node's image provides it (the kube-proxy image's iptables-wrapper picks
# the backend that works): UML's kernel has no ip-family nftables, so the legacy iptables; and modprobe
# with UML's module tree (kube-proxy's ipvs cleanup first runs `modprobe -va ip_vs` and skips itself
# when that fails: pkg/proxy/ipvs/proxier.go CleanupLeftovers). Both only in the guest's /run.
mkdir -p /run/kp-bin
for t in iptables ip6tables; do
  ln -s "/usr/sbin/$t-legacy" "/run/kp-bin/$t"
  ln -s "/usr/sbin/$t-legacy-save" "/run/kp-bin/$t-save"
  ln -s "/usr/sbin/$t-legacy-restore" "/run/kp-bin/$t-restore"
done
printf '#!/bin/sh\nexec /sbin/modprobe -d /run/mods "$@"\n' >/run/kp-bin/modprobe
chmod 755 /run/kp-bin/modprobe
export PATH="/run/kp-bin:$PATH"

# The node: eth0 with the Node object's addresses (test/helpers/real-cluster.ts), default routes on it.
ip link add eth0 type dummy
ip addr add 10.88.0.10/24 dev eth0
ip -6 addr add fd00:88::10/64 dev eth0 nodad
ip link set eth0 up
ip route add default dev eth0
ip -6 route add default dev eth0

node dist/test/standins/apiserver.js "$OUT/cluster.json" >"$OUT/apiserver.log" 2>&1 &
API_PID=$!
n=0
while ! grep -q '^ready' "$OUT/apiserver.log" 2>/dev/null; do
  kill -0 "$API_PID" 2>/dev/null || { echo "API stand-in exited before it was ready"; cat "$OUT/apiserver.log"; exit 1; }
  n=$((n + 1)); [ $n -lt 1200 ] || { echo "API stand-in not ready in 600 s"; exit 1; }
  sleep 0.5
done

KP_PID=
# start_kp STEP MODE: starts kube-proxy ($KP) in MODE and waits for its own signal that it synced both
# IP families (the dual-stack proxier syncs IPv4 and then IPv6, minutes apart in UML):
# kubeproxy_sync_proxy_rules_last_timestamp_seconds above 0 on /metrics for $SERIES series (one per IP
# family from v1.33). Before v1.33 that gauge is one series both families set, so with SERIES=log the
# signal is the IPv6 proxier's own "syncProxyRules complete" line (V(4) in pkg/proxy/ipvs/proxier.go,
# hence --vmodule=proxier=4 then). Its stderr goes to $OUT/STEP.kp.log; if it exits first, its status
# goes to $OUT/STEP.kp.rc and this returns 1.
SERIES=${PROXYSCOPE_KP_SERIES:-1}
start_kp() {
  verbosity=-v=2
  [ "$SERIES" != log ] || verbosity="-v=2 --vmodule=proxier=4"
  # shellcheck disable=SC2086
  "$KP" --config="$OUT/config-$2.json" --hostname-override=$NODE $verbosity >"$OUT/$1.kp.log" 2>&1 &
  KP_PID=$!
  echo "$1: started $(date +%s)"
  n=0
  while :; do
    if [ "$SERIES" = log ]; then
      synced=$(grep '"syncProxyRules complete"' "$OUT/$1.kp.log" | grep -c 'ipFamily="IPv6"')
      [ "${synced:-0}" -eq 0 ] || synced=log
    else
      synced=$(curl -s --max-time 30 "http://$METRICS/metrics" 2>/dev/null |
        grep -Ec '^kubeproxy_sync_proxy_rules_last_timestamp_seconds(\{[^}]*\})? [1-9]')
    fi
    if [ "${synced:-0}" = log ] || { [ "$SERIES" != log ] && [ "${synced:-0}" -ge "$SERIES" ]; }; then
      echo "$1: kube-proxy $2 synced $(date +%s)"
      return 0
    fi
    if ! kill -0 "$KP_PID" 2>/dev/null; then
      wait "$KP_PID"; echo $? >"$OUT/$1.kp.rc"
      echo "$1: kube-proxy $2 exited before it synced (rc $(cat "$OUT/$1.kp.rc"))"
      KP_PID=
      return 1
    fi
    n=$((n + 1)); [ $n -lt 1200 ] || { echo "$1: kube-proxy $2 did not sync in 600+ s"; return 1; }
    sleep 0.5
  done
}

# SIGTERM, as the kubelet stops a pod: kube-proxy leaves its rules in place.
stop_kp() {
  [ -n "$KP_PID" ] || return 0
  kill -TERM "$KP_PID" 2>/dev/null
  wait "$KP_PID"
  KP_PID=
}

# record DIR: kube-proxy's own answers, as test/kernel/real-kube-proxy-netns.test.ts records them.
record() {
  mkdir -p "$OUT/$1"
  for f in proxyMode.txt:http://$METRICS/proxyMode configz.json:http://$METRICS/configz \
    metrics.txt:http://$METRICS/metrics healthz.txt:http://$HEALTH/healthz livez.txt:http://$HEALTH/livez; do
    curl -sS --max-time 30 -o "$OUT/$1/${f%%:*}" -w '%{http_code} %{content_type}\n' "${f#*:}" \
      >"$OUT/$1/${f%%:*}.status"
  done
}

# dump STEP: the kernel state, read with the tools themselves (not the agent).
dump() {
  ipvsadm -Ln >"$OUT/$1.ipvsadm" 2>&1
  if ip link show kube-ipvs0 >/dev/null 2>&1; then ip addr show dev kube-ipvs0 >"$OUT/$1.kube-ipvs0" 2>&1
  else echo absent >"$OUT/$1.kube-ipvs0"; fi
  ipset list -n >"$OUT/$1.ipsets" 2>&1
  iptables-legacy-save >"$OUT/$1.iptables" 2>&1
  ip6tables-legacy-save >"$OUT/$1.ip6tables" 2>&1
  sysctl net.ipv4.conf.all.arp_ignore net.ipv4.conf.all.arp_announce net.ipv4.vs.conntrack \
    net.ipv4.vs.expire_nodest_conn net.ipv4.vs.expire_quiescent_template net.ipv4.ip_forward \
    >"$OUT/$1.sysctls" 2>&1
}

# scan STEP [verify MODE]: the agent's scan (and verify --expect-mode MODE) of the node as it is.
PARITY=$OUT/parity.json
scan() {
  # shellcheck disable=SC2086
  node dist/agent/cli.js scan --json --node $NODE --node-ip 10.88.0.10 $KP_URLS $SLOW \
    --parity-snapshot "$PARITY" >"$OUT/$1.scan.json" 2>"$OUT/$1.scan.err"
  echo $? >"$OUT/$1.scan.rc"
  echo "$1: scanned $(date +%s)"
  [ $# -ge 3 ] || return 0
  # shellcheck disable=SC2086
  node dist/agent/cli.js verify --expect-mode "$3" --json --node $NODE --node-ip 10.88.0.10 $KP_URLS \
    $SLOW --sync-window-s 0 --skip-connect --parity-snapshot "$PARITY" \
    >"$OUT/$1.verify.json" 2>"$OUT/$1.verify.err"
  echo $? >"$OUT/$1.verify.rc"
}

# 1. ipvs mode, fresh node.
if start_kp ipvs ipvs; then
  record record-ipvs
  dump ipvs
  scan ipvs
fi
stop_kp
dump ipvs-stopped

# 2. The switch: the same binary in nftables mode. Its start cleans ipvs mode's state first
# (cmd/kube-proxy/app/options.go Run -> platformCleanup), then builds its proxier.
start_kp nft nftables
stop_kp
dump nft
scan nft verify nftables

# 3. The rollback: ipvs mode again.
if start_kp back ipvs; then
  dump back
  scan back verify ipvs
fi
stop_kp

# 4. ipvs -> iptables.
if start_kp ipt iptables; then
  record record-iptables
  dump ipt
  scan ipt
fi
stop_kp
dump ipt-stopped

# 5. The other releases in ipvs mode ($PROXYSCOPE_KP_MORE: "VERSION=BINARY=SERIES ..."), each on a
# node without kube-proxy state. First kube-proxy's own `--cleanup` (the first release's binary;
# cmd/kube-proxy/app/server_linux.go platformCleanup), dumped as STEP-first: what it leaves is checked.
# Then the node is reset by this script, standing in for a fresh node: every iptables and ip6tables
# table flushed and its chains deleted, IPVS cleared, kube-ipvs0 deleted, every ipset destroyed.
clean_node() {
  "$PROXYSCOPE_KP" --cleanup --config="$OUT/config-ipvs.json" >"$OUT/$1-first.kp.log" 2>&1
  echo $? >"$OUT/$1-first.kp.rc"
  dump "$1-first"
  for c in iptables-legacy ip6tables-legacy; do
    for t in raw mangle nat filter; do $c -t $t -F; $c -t $t -X; done
  done
  ipvsadm -C
  ip link del kube-ipvs0 2>/dev/null
  for s in $(ipset list -n 2>/dev/null); do ipset destroy "$s"; done
  dump "$1"
}
for spec in ${PROXYSCOPE_KP_MORE:-}; do
  v=${spec%%=*}
  rest=${spec#*=}
  KP=${rest%%=*}
  SERIES=${rest#*=}
  PARITY=$OUT/parity-$v.json
  clean_node "clean-$v"
  # From v1.37 ipvs mode is behind the KubeProxyIPVS gate: off, kube-proxy must refuse ipvs mode
  # before it touches the node (pkg/proxy/apis/config/validation/validation.go validateProxyModeLinux).
  if [ -f "$OUT/config-ipvs-gate-off-$v.json" ]; then
    timeout 300 "$KP" --config="$OUT/config-ipvs-gate-off-$v.json" --hostname-override=$NODE -v=2 \
      >"$OUT/gate-off-$v.kp.log" 2>&1
    echo $? >"$OUT/gate-off-$v.kp.rc"
    dump "gate-off-$v"
  fi
  if start_kp "ipvs-$v" ipvs; then
    record "record-$v-ipvs"
    dump "ipvs-$v"
    scan "ipvs-$v"
  fi
  stop_kp
  # The gate set on: kube-proxy's own /configz is all this step reads (as soon as it answers).
  if [ -f "$OUT/config-ipvs-gate-on-$v.json" ]; then
    "$KP" --config="$OUT/config-ipvs-gate-on-$v.json" --hostname-override=$NODE -v=2 \
      >"$OUT/gate-on-$v.kp.log" 2>&1 &
    KP_PID=$!
    n=0
    until curl -sS --max-time 30 -o "$OUT/gate-on-$v.configz.json" -w '%{http_code}\n' \
      "http://$METRICS/configz" >"$OUT/gate-on-$v.configz.status" 2>/dev/null; do
      kill -0 "$KP_PID" 2>/dev/null || break
      n=$((n + 1)); [ $n -lt 600 ] || break
      sleep 0.5
    done
    stop_kp
  fi
done
echo "more: done $(date +%s)"

kill -TERM "$API_PID" 2>/dev/null
wait "$API_PID"
echo guest-done
