#!/bin/sh
# Init script of one User-Mode Linux boot comparing /proc/net/ip_vs with bench/alt/ipvs-netlink-dump.c
# (result: bench/results/ipvs-netlink.md). W holds the built dump as $W/ipvs-table and $W/rules.txt,
# `ipvsadm -R` input of 10,000 TCP Services x 10 Masq endpoints, made exactly as measured by:
#   python3 -c 'import sys
#   for s in range(10000):
#       v=f"10.{96+s//65536}.{(s//256)%256}.{s%256}"; print(f"-A -t {v}:80 -s rr")
#       for d in range(10): print(f"-a -t {v}:80 -r 10.244.{s%250}.{d+1}:8080 -m -w 1")' > $W/rules.txt
# Boot:
#   LD_PRELOAD=dist/uml/uml-xstate-shim.so linux.uml mem=1024M root=/dev/root rootfstype=hostfs \
#     rootflags=/ rw quiet init=$W/init.sh con=null con0=fd:0,fd:1 uml_dir=$W umid=exp1 </dev/null
# Edit REPO and W to the checkout and the work directory (both on the host's disk; init gets no
# environment).
REPO=/work/main
W=/var/tmp/ipvsexp
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
. $REPO/test/helpers/uml/guest-lib.sh
proxyscope_mount_basics
proxyscope_load_modules ipv6 nf_conntrack ip_vs ip_vs_rr ip_vs_sh ip_vs_wrr ip_vs_mh
ip link set lo up; ip link add eth0 type dummy; ip addr add 172.18.0.10/16 dev eth0; ip link set eth0 up
T=$W/ipvs-table
ipvsadm -A -t 10.96.0.1:443 -s rr
ipvsadm -a -t 10.96.0.1:443 -r 10.244.0.2:6443 -m -w 1
ipvsadm -a -t 10.96.0.1:443 -r 10.244.0.3:6443 -g -w 0
ipvsadm -A -u 10.96.0.10:53 -s sh -p 300 -M 255.255.255.0
ipvsadm -a -u 10.96.0.10:53 -r 10.244.1.5:53 -i -w 7
ipvsadm -A -t 10.96.0.11:80 -s wrr -o
ipvsadm -A -f 42 -s rr
ipvsadm -a -f 42 -r 10.244.2.1:0 -g -w 3
ipvsadm -A -t [fd00::1]:80 -s rr
ipvsadm -a -t [fd00::1]:80 -r [fd01::5]:8080 -m -w 2
ipvsadm -A -t 127.0.0.1:81 -s mh
ipvsadm -a -t 127.0.0.1:81 -r 127.0.0.1:81 -w 1
ipvsadm -A --sctp-service 10.96.0.12:9 -s rr
cat /proc/net/ip_vs > $W/proc-small.txt
$T > $W/nl-small.txt; echo "nl rc=$?"
cmp $W/proc-small.txt $W/nl-small.txt && echo SMALL-IDENTICAL
ipvsadm -C
ipvsadm -R < $W/rules.txt 2>$W/restore.err; echo restored; head -2 $W/restore.err; grep -c . /proc/net/ip_vs
for i in 1 2; do
/usr/bin/time -f "cat %e s wall %U u %S s" cat /proc/net/ip_vs > $W/proc-big.txt
/usr/bin/time -f "netlink %e s wall %U u %S s" $T > $W/nl-big.txt
done
cmp $W/proc-big.txt $W/nl-big.txt && echo BIG-IDENTICAL
poweroff -f
