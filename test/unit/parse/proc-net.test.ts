import t from "tap";
import { canonicalIp } from "../../../agent/parse/ip-text.js";
import { parseConntrackFlow, parseProcNetTcp } from "../../../agent/parse/proc-net.js";

// Lines as the kernel prints them (net/ipv4/tcp_ipv4.c get_tcp4_sock, net/ipv6/tcp_ipv6.c get_tcp6_sock):
// kube-proxy's metrics on 127.0.0.1:10249, a Go listener on [::]:31234 (Go listens dual-stack on a
// wildcard), an established socket that is not listening.
const TCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:2809 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 41234 1 0000000000000000 100 0 0 10 0
   1: 0B04A8C0:A5D2 0504A8C0:7A02 01 00000000:00000000 02:0000012C 00000000     0        0 41299 2 0000000000000000 20 4 30 10 -1
`;
const TCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:7A02 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 51234 1 0000000000000000 100 0 0 10 0
   1: 0000000000000000FFFF00000B04A8C0:2820 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 51235 1 0000000000000000 100 0 0 10 0
   2: B80D01200000000000000000010000FD:7A03 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 51236 1 0000000000000000 100 0 0 10 0
`;

t.test("LISTEN sockets of tcp and tcp6, addresses decoded", async (t) => {
  t.same(parseProcNetTcp(TCP, "inet", true), {
    ok: true,
    value: [{ family: "inet", address: "127.0.0.1", port: 10249, inode: "41234" }],
  });
  const six = parseProcNetTcp(TCP6, "inet6", true);
  t.same(six.ok && six.value.map((s) => `${s.address} ${s.port} ${s.inode}`), [
    ":: 31234 51234",
    "::ffff:192.168.4.11 10272 51235",
    "2001:db8::fd00:1 31235 51236",
  ]);
});

t.test("a socket table that is not one is an error, never empty", async (t) => {
  t.notOk(parseProcNetTcp("garbage\n", "inet").ok);
  t.notOk(parseProcNetTcp(TCP.replace("0100007F:2809", "zz:2819"), "inet").ok);
  t.same(parseProcNetTcp(TCP.split("\n")[0]! + "\n", "inet"), { ok: true, value: [] });
});

t.test("conntrack entries: the original direction's destination", async (t) => {
  t.same(
    parseConntrackFlow(
      "ipv4     2 tcp      6 117 TIME_WAIT src=10.0.0.9 dst=10.0.0.5 sport=51234 dport=31234 src=10.0.0.5 dst=10.0.0.9 sport=31234 dport=51234 [ASSURED] mark=0 zone=0 use=2",
    ),
    { ok: true, value: { proto: "tcp", src: "10.0.0.9", dst: "10.0.0.5", dport: 31234 } },
  );
  t.same(
    parseConntrackFlow(
      "ipv6     10 tcp      6 86399 ESTABLISHED src=2001:0db8:0000:0000:0000:0000:0000:0009 dst=2001:0db8:0000:0000:0000:0000:0000:0005 sport=40000 dport=31234 src=2001:0db8:0000:0000:0000:0000:0000:0005 dst=2001:0db8:0000:0000:0000:0000:0000:0009 sport=31234 dport=40000 [ASSURED] mark=0 zone=0 use=2",
    ),
    { ok: true, value: { proto: "tcp", src: "2001:db8::9", dst: "2001:db8::5", dport: 31234 } },
  );
  t.same(
    parseConntrackFlow(
      "ipv4     2 icmp     1 29 src=10.0.0.9 dst=10.0.0.5 type=8 code=0 id=7 src=10.0.0.5 dst=10.0.0.9 type=0 code=0 id=7 mark=0 use=1",
    ),
    { ok: true, value: { proto: "icmp", src: "10.0.0.9", dst: "10.0.0.5", dport: null } },
    "an entry without ports: no port, not an error",
  );
  t.notOk(parseConntrackFlow("<html>").ok, "a line that is no entry is an error");
  t.notOk(parseConntrackFlow("ipv4 2 tcp 6 117 TIME_WAIT src=10.0.0.9 dst=nope sport=1 dport=2").ok);
  t.equal(canonicalIp("FD00:0:0:0:0:0:0:1"), "fd00::1");
  t.equal(canonicalIp("nope"), null);
});
