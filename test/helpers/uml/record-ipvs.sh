# Guest side of test/helpers/uml/record-ipvs-fixtures.ts: builds IPVS tables, a kube-ipvs0 link and
# ipsets in network namespaces of a UML guest and records what the tools and /proc print.
# Usage (inside the guest): sh record-ipvs.sh OUTDIR MODULE...
#   OUTDIR   host path (via hostfs) that receives the fixtures, e.g. test/fixtures/ipvs
#   MODULE   the IPVS/ipset modules, loaded by this script after the "not loaded" recordings
set -eu
OUT=$1
shift
. "$(dirname "$0")/guest-lib.sh"

# rec FILE CMD...: stdout to FILE, stderr to FILE.stderr and the exit status to FILE.exit, but only
# the files that say something: an empty stderr and a zero exit are left out.
rec() {
  file=$1
  shift
  mkdir -p "$(dirname "$file")"
  set +e
  "$@" >"$file" 2>"$file.stderr"
  rc=$?
  set -e
  [ -s "$file.stderr" ] || rm -f "$file.stderr"
  if [ "$rc" -ne 0 ]; then echo "$rc" >"$file.exit"; fi
  return 0
}

# record_ipvs NS NAME: the three views of one namespace's IPVS table, then clears that table.
# Clearing matters: while another namespace has IPVS services, reading /proc/net/ip_vs (kernel 6.1)
# skips services each time the seq_file restarts, so each scenario is recorded with the others empty,
# and the service counts of /proc and ipvsadm are compared.
record_ipvs() {
  d=$OUT/$2
  rec "$d/proc/net/ip_vs" ip netns exec "$1" cat /proc/net/ip_vs
  rec "$d/ipvsadm-L-n.txt" ip netns exec "$1" ipvsadm -L -n
  rec "$d/ipvsadm-L-timeout.txt" ip netns exec "$1" ipvsadm -L --timeout
  from_proc=$(grep -cE '^(TCP|UDP|SCTP|FWM) ' "$d/proc/net/ip_vs" || true)
  from_ipvsadm=$(grep -cE '^(TCP|UDP|SCTP|FWM) ' "$d/ipvsadm-L-n.txt" || true)
  if [ "$from_proc" != "$from_ipvsadm" ]; then
    echo "$2: /proc/net/ip_vs lists $from_proc services, ipvsadm $from_ipvsadm" >&2
    exit 1
  fi
  ip netns exec "$1" ipvsadm -C
}

# A node-like namespace: loopback, an "eth0" with the node address and a default route.
node_ns() {
  proxyscope_netns "$1"
  ip -n "$1" link add eth0 type dummy
  ip -n "$1" addr add 172.18.0.10/16 dev eth0
  ip -n "$1" -6 addr add fd00:18::10/64 dev eth0 nodad
  ip -n "$1" link set eth0 up
  ip -n "$1" route add default via 172.18.0.1 dev eth0 onlink
  ip -n "$1" -6 route add default via fd00:18::1 dev eth0 onlink
}

# ipvs NS ARGS...: ipvsadm in a namespace.
ipvs() {
  ns=$1
  shift
  ip netns exec "$ns" ipvsadm "$@"
}

rm -rf "$OUT/sys" "$OUT/not-loaded" "$OUT/empty" "$OUT/kube-small" "$OUT/ipv6" "$OUT/sctp" "$OUT/fwm" \
  "$OUT/persistent" "$OUT/schedulers" "$OUT/large" "$OUT/kube-ipvs0" "$OUT/ipsets"

# --- Before the modules: IPVS and ip_set not loaded (autoloading fails: no modules at /lib/modules).
rec "$OUT/not-loaded/ipvsadm-L-timeout.txt" ipvsadm -L --timeout
rec "$OUT/not-loaded/ipset-list-terse.txt" ipset list -terse
if [ -e /proc/net/ip_vs ]; then echo "ip_vs got loaded behind our back" >&2; exit 1; fi

proxyscope_load_modules "$@"
# What the ipsets probe looks for before it runs ipset: sysfs lists ip_set (a max_sets parameter).
mkdir -p "$OUT/sys/module/ip_set/parameters"
cat /sys/module/ip_set/parameters/max_sets >"$OUT/sys/module/ip_set/parameters/max_sets"

# --- empty: IPVS loaded, no services, default timeouts.
proxyscope_netns empty
record_ipvs empty empty

# --- kube-small: what kube-proxy's ipvs mode leaves on a small node. ClusterIPs bound to a
# kube-ipvs0 that stays down, Masq to pod IPs, a NodePort on the node address, a Service without
# endpoints, changed timeouts (--ipvs-tcp-timeout 7200s, --ipvs-tcpfin-timeout 30s, --ipvs-udp-timeout 60s)
# and real connections from the node: three attempts to pods that never answer and one established
# connection to a "pod" listening on the node address (the counters show what the kernel made of them).
node_ns kube
ip -n kube link add kube-ipvs0 type dummy
for vip in 10.96.0.1 10.96.0.10 10.96.143.20 10.96.143.30 10.96.200.1; do
  ip -n kube addr add "$vip/32" dev kube-ipvs0
done
ipvs kube -A -t 10.96.0.1:443 -s rr
for rs in 172.18.0.2 172.18.0.3 172.18.0.4; do ipvs kube -a -t 10.96.0.1:443 -r "$rs:6443" -m -w 1; done
for svc in "-u 10.96.0.10:53" "-t 10.96.0.10:53" "-t 10.96.0.10:9153"; do
  # shellcheck disable=SC2086 # word splitting intended
  ipvs kube -A $svc -s rr
  port=${svc##*:}
  for rs in 10.244.0.2 10.244.1.3; do
    # shellcheck disable=SC2086
    ipvs kube -a $svc -r "$rs:$port" -m -w 1
  done
done
ipvs kube -A -t 10.96.143.20:80 -s rr
for rs in 10.244.1.5 10.244.2.6 10.244.3.7; do ipvs kube -a -t 10.96.143.20:80 -r "$rs:8080" -m -w 1; done
ipvs kube -A -t 172.18.0.10:30080 -s rr
for rs in 10.244.1.5 10.244.2.6 10.244.3.7; do ipvs kube -a -t 172.18.0.10:30080 -r "$rs:8080" -m -w 1; done
ipvs kube -A -t 10.96.143.30:80 -s rr
ipvs kube -a -t 10.96.143.30:80 -r 172.18.0.10:8080 -m -w 1
ipvs kube -A -t 10.96.200.1:80 -s rr
ipvs kube --set 7200 30 60
ip netns exec kube node -e '
  const net = require("node:net");
  const srv = net.createServer(() => {}).listen(8080, "172.18.0.10", () => {
    net.connect(80, "10.96.143.30").on("connect", () => console.log("established"));
    for (let i = 0; i < 3; i++) {
      const c = net.connect(80, "10.96.143.20");
      c.on("error", () => {});
      setTimeout(() => c.destroy(), 300);
    }
  });
  setTimeout(() => process.exit(0), 30000);
' >"$PROXYSCOPE_WORKDIR/conns.log" 2>&1 &
conns=$!
sleep 2
record_ipvs kube kube-small
kill "$conns" 2>/dev/null || true

# --- ipv6: bracketed hex in /proc; addresses chosen for the compression rules (a tie between two
# zero runs compresses the first; a single zero group is not compressed; no zero run at all).
node_ns v6
ipvs v6 -A -t "[fd00:10:96::1]:443" -s rr
ipvs v6 -a -t "[fd00:10:96::1]:443" -r "[fd00:10:244:1::2]:6443" -m -w 1
ipvs v6 -a -t "[fd00:10:96::1]:443" -r "[fd00:10:244:2::3]:6443" -m -w 1
ipvs v6 -A -u "[fd00:10:96::a]:53" -s rr
ipvs v6 -a -u "[fd00:10:96::a]:53" -r "[fd00:10:244:1::5]:53" -m -w 1
ipvs v6 -A -t "[2001:db8:0:0:1:0:0:1]:80" -s rr
ipvs v6 -a -t "[2001:db8:0:0:1:0:0:1]:80" -r "[2001:db8:0:1:0:0:0:1]:8080" -m -w 1
ipvs v6 -A -t "[2001:db8:1:2:3:4:5:6]:80" -s rr
ipvs v6 -a -t "[2001:db8:1:2:3:4:5:6]:80" -r "[2001:db8:0:1:1:1:1:1]:80" -m -w 2
ipvs v6 -A -t 10.96.0.1:443 -s rr
ipvs v6 -a -t 10.96.0.1:443 -r 172.18.0.2:6443 -m -w 1
record_ipvs v6 ipv6

# --- sctp
node_ns sctp
ipvs sctp -A --sctp-service 10.96.0.20:3868 -s rr
ipvs sctp -a --sctp-service 10.96.0.20:3868 -r 10.244.0.5:3868 -m -w 1
ipvs sctp -a --sctp-service 10.96.0.20:3868 -r 10.244.1.6:3868 -m -w 1
ipvs sctp -A --sctp-service "[fd00:10:96::20]:3868" -s rr
ipvs sctp -a --sctp-service "[fd00:10:96::20]:3868" -r "[fd00:10:244::5]:3868" -m -w 1
record_ipvs sctp sctp

# --- fwm: firewall-mark services, IPv4 and IPv6 (only ipvsadm says IPv6 when there is no real server)
node_ns fwm
ipvs fwm -A -f 1 -s rr
ipvs fwm -a -f 1 -r 10.244.0.7:0 -m -w 1
ipvs fwm -a -f 1 -r 10.244.0.8:0 -m -w 1
ipvs fwm -A -f 2 -6 -s rr
ipvs fwm -a -f 2 -6 -r "[fd00:10:244::7]:0" -m -w 1
ipvs fwm -A -f 3 -6 -s rr
ipvs fwm -A -f 4096 -s wlc
record_ipvs fwm fwm

# --- persistent: -p (ClientIP session affinity; /proc prints the timeout in jiffies, HZ=100 here)
node_ns persist
ipvs persist -A -t 10.96.0.30:80 -s rr -p 600
ipvs persist -a -t 10.96.0.30:80 -r 10.244.0.9:8080 -m -w 1
ipvs persist -a -t 10.96.0.30:80 -r 10.244.1.9:8080 -m -w 1
ipvs persist -A -u 10.96.0.31:53 -s rr -p 10800
ipvs persist -a -u 10.96.0.31:53 -r 10.244.0.10:53 -m -w 1
ipvs persist -A -t 10.96.0.32:443 -s sh -p 600 -M 255.255.255.0
ipvs persist -a -t 10.96.0.32:443 -r 10.244.0.11:8443 -m -w 1
ipvs persist -A -t "[fd00:10:96::30]:80" -s lc -p 600
ipvs persist -a -t "[fd00:10:96::30]:80" -r "[fd00:10:244::9]:8080" -m -w 1
record_ipvs persist persistent

# --- schedulers: rr, lc, sh with flags, wrr with weights, one-packet UDP, maglev, and a
# keepalived-style VIP that is not a Service (direct routing, a drained server, a tunnel).
# Timeouts partly changed: "--set 0 0 45" keeps tcp and tcpfin.
node_ns sched
ipvs sched -A -t 10.96.1.1:80 -s rr
ipvs sched -a -t 10.96.1.1:80 -r 10.244.0.21:80 -m -w 1
ipvs sched -a -t 10.96.1.1:80 -r 10.244.0.22:80 -m -w 1
ipvs sched -A -t 10.96.1.2:80 -s lc
ipvs sched -a -t 10.96.1.2:80 -r 10.244.0.23:80 -m -w 1
ipvs sched -A -t 10.96.1.3:80 -s sh -b sh-port
ipvs sched -a -t 10.96.1.3:80 -r 10.244.0.24:80 -m -w 1
ipvs sched -A -t 10.96.1.4:80 -s sh -b sh-fallback,sh-port
ipvs sched -a -t 10.96.1.4:80 -r 10.244.0.25:80 -m -w 1
ipvs sched -A -t 10.96.1.5:80 -s wrr
ipvs sched -a -t 10.96.1.5:80 -r 10.244.0.26:80 -m -w 1
ipvs sched -a -t 10.96.1.5:80 -r 10.244.0.27:80 -m -w 3
ipvs sched -a -t 10.96.1.5:80 -r 10.244.0.28:80 -m -w 5
ipvs sched -A -u 10.96.1.6:53 -s wrr -o
ipvs sched -a -u 10.96.1.6:53 -r 10.244.0.29:53 -m -w 2
ipvs sched -A -t 10.96.1.7:80 -s mh -b mh-port
ipvs sched -a -t 10.96.1.7:80 -r 10.244.0.30:80 -m -w 1
ipvs sched -A -t 192.168.50.100:80 -s wlc
ipvs sched -a -t 192.168.50.100:80 -r 192.168.50.11:80 -g -w 100
ipvs sched -a -t 192.168.50.100:80 -r 192.168.50.12:80 -g -w 0
ipvs sched -a -t 192.168.50.100:80 -r 192.168.60.13:80 -i -w 50
ipvs sched --set 0 0 45
record_ipvs sched schedulers

# --- large: 1,000 Services x 10 endpoints, loaded with one `ipvsadm -R`. Every tenth is UDP/53.
node_ns large
awk 'BEGIN {
  for (i = 0; i < 1000; i++) {
    vip = sprintf("10.96.%d.%d", int(i / 250), i % 250 + 1)
    if (i % 10 == 9) { proto = "-u"; port = 53; tport = 53 } else { proto = "-t"; port = 80 + i % 3; tport = 8080 }
    printf "-A %s %s:%d -s rr\n", proto, vip, port
    for (j = 0; j < 10; j++) {
      n = i * 10 + j
      printf "-a %s %s:%d -r 10.244.%d.%d:%d -m -w 1\n", proto, vip, port, int(n / 250), n % 250 + 1, tport
    }
  }
}' >"$TMPDIR/large.rules"
ip netns exec large ipvsadm -R <"$TMPDIR/large.rules"
record_ipvs large large
gzip -9n "$OUT/large/proc/net/ip_vs" "$OUT/large/ipvsadm-L-n.txt"

# --- kube-ipvs0: absent, present without addresses, present with kube-proxy's /32 and /128.
node_ns kip
rec "$OUT/kube-ipvs0/absent.json" ip -n kip -j -d addr show dev kube-ipvs0
ip -n kip link add kube-ipvs0 type dummy
rec "$OUT/kube-ipvs0/empty.json" ip -n kip -j -d addr show dev kube-ipvs0
for vip in 10.96.0.1 10.96.0.10 10.96.143.20; do ip -n kip addr add "$vip/32" dev kube-ipvs0; done
for vip in fd00:10:96::1 fd00:10:96::a; do ip -n kip -6 addr add "$vip/128" dev kube-ipvs0 nodad; done
rec "$OUT/kube-ipvs0/present.json" ip -n kip -j -d addr show dev kube-ipvs0

# --- ipsets: none, then kube-proxy's sets for both families (the IPv6 ones renamed KUBE-6-* and
# cut to 31 characters, as kube-proxy does), a few members, one set referenced by an iptables rule,
# and sets that are not kube-proxy's (fail2ban, Calico, a look-alike KUBE-* name).
proxyscope_netns sets
rec "$OUT/ipsets/none/ipset-list-terse.txt" ip netns exec sets ipset list -terse
kube_sets='KUBE-LOOP-BACK hash:ip,port,ip
KUBE-CLUSTER-IP hash:ip,port
KUBE-EXTERNAL-IP hash:ip,port
KUBE-EXTERNAL-IP-LOCAL hash:ip,port
KUBE-LOAD-BALANCER hash:ip,port
KUBE-LOAD-BALANCER-FW hash:ip,port
KUBE-LOAD-BALANCER-LOCAL hash:ip,port
KUBE-LOAD-BALANCER-SOURCE-IP hash:ip,port,ip
KUBE-LOAD-BALANCER-SOURCE-CIDR hash:ip,port,net
KUBE-NODE-PORT-TCP bitmap:port
KUBE-NODE-PORT-LOCAL-TCP bitmap:port
KUBE-NODE-PORT-UDP bitmap:port
KUBE-NODE-PORT-LOCAL-UDP bitmap:port
KUBE-NODE-PORT-SCTP-HASH hash:ip,port
KUBE-NODE-PORT-LOCAL-SCTP-HASH hash:ip,port
KUBE-HEALTH-CHECK-NODE-PORT bitmap:port
KUBE-IPVS-IPS hash:ip'
echo "$kube_sets" | while read -r name type; do
  for family in inet inet6; do
    set_name=$name
    if [ "$family" = inet6 ]; then set_name=$(echo "KUBE-6-${name#KUBE-}" | cut -c1-31); fi
    case $type in
      bitmap:port) ip netns exec sets ipset create "$set_name" "$type" range 0-65535 ;;
      *) ip netns exec sets ipset create "$set_name" "$type" family "$family" hashsize 1024 maxelem 65536 ;;
    esac
  done
done
ip netns exec sets ipset add KUBE-CLUSTER-IP 10.96.0.1,tcp:443
ip netns exec sets ipset add KUBE-CLUSTER-IP 10.96.0.10,udp:53
ip netns exec sets ipset add KUBE-CLUSTER-IP 10.96.0.10,tcp:53
ip netns exec sets ipset add KUBE-LOOP-BACK 10.244.1.5,tcp:8080,10.244.1.5
ip netns exec sets ipset add KUBE-NODE-PORT-TCP 30080
ip netns exec sets ipset add KUBE-IPVS-IPS 10.96.0.1
ip netns exec sets ipset add KUBE-IPVS-IPS 10.96.0.10
ip netns exec sets ipset add KUBE-6-CLUSTER-IP fd00:10:96::1,tcp:443
ip netns exec sets ipset add KUBE-6-IPVS-IPS fd00:10:96::1
ip netns exec sets iptables-legacy -t nat -N KUBE-SERVICES
ip netns exec sets iptables-legacy -t nat -A KUBE-SERVICES -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT
ip netns exec sets ipset create f2b-sshd hash:ip
ip netns exec sets ipset add f2b-sshd 198.51.100.7
ip netns exec sets ipset add f2b-sshd 203.0.113.9
ip netns exec sets ipset create cali40all-ipam-pools hash:net family inet
ip netns exec sets ipset add cali40all-ipam-pools 10.244.0.0/16
ip netns exec sets ipset create KUBE-CUSTOM-ALLOW hash:net family inet6
rec "$OUT/ipsets/kube/ipset-list-terse.txt" ip netns exec sets ipset list -terse
rec "$OUT/ipsets/kube/ipset-list-name.txt" ip netns exec sets ipset list -name
rec "$OUT/ipsets/kube/ipset-list.txt" ip netns exec sets ipset list
rec "$OUT/ipsets/kube/ipset-create-too-long.txt" ip netns exec sets ipset create KUBE-6-LOAD-BALANCER-SOURCE-CIDR hash:ip,port,net family inet6

# Versions of the tools that printed all this.
{
  uname -r
  ipvsadm --version
  ipset version
  ip -V
} >"$OUT/versions.txt" 2>&1
