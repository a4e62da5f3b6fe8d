import t from "tap";
import { canonicalIp, covers } from "../../../agent/parse/listen-address.js";
import {
  parseProcNetTcp as parse,
  procAddress,
  type ListeningSocket,
} from "../../../agent/parse/proc-net.js";

const parseProcNetTcp = (text: string, family: "inet" | "inet6") => {
  const p = parse(text, family, true);
  if (!p.ok) throw new Error(p.error);
  return p.value;
};

// /proc/net/tcp{,6} as the kernel prints it (the tcp4_seq_show / tcp6_seq_show format): each 32-bit
// word of the address in host order; these lines are an x86-64 (little-endian) kernel's.
const HEADER =
  "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";
const TCP =
  HEADER +
  "   0: 0100007F:2809 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0000000000000000 100 0 0 10 0\n" +
  "   1: 02004D0A:2809 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4243 1 0000000000000000 100 0 0 10 0\n" +
  "   2: 00000000:2810 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4244 1 0000000000000000 100 0 0 10 0\n" +
  // An established connection, not a listener.
  "   3: 0100007F:2809 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 4245 1 0000000000000000 20 4 30 10 -1\n";
const TCP6 =
  HEADER +
  "   0: 00000000000000000000000001000000:2809 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 5001 1 0000000000000000 100 0 0 10 0\n" +
  "   1: 00000000000000000000000000000000:2810 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 5002 1 0000000000000000 100 0 0 10 0\n" +
  "   2: 0000000000000000FFFF00000100007F:2809 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 5003 1 0000000000000000 100 0 0 10 0\n";

t.test("LISTEN sockets with their address, port and inode", async (t) => {
  t.same(parseProcNetTcp(TCP, "inet"), [
    { family: "inet", address: "127.0.0.1", port: 10249, inode: "4242" },
    { family: "inet", address: "10.77.0.2", port: 10249, inode: "4243" },
    { family: "inet", address: "0.0.0.0", port: 10256, inode: "4244" },
  ]);
  t.same(
    parseProcNetTcp(TCP6, "inet6").map((l) => [l.address, l.port]),
    [
      ["::1", 10249],
      ["::", 10256],
      ["::ffff:127.0.0.1", 10249],
    ],
  );
  t.equal(procAddress("0100007F", false), "1.0.0.127", "a big-endian kernel prints network order");
  t.equal(procAddress("nothex!!"), null);
  t.equal(canonicalIp("[0:0:0:0:0:0:0:1]"), "::1");
  t.equal(canonicalIp("[::ffff:7f00:1]"), "::ffff:127.0.0.1", "URL's spelling of a mapped address");
  t.equal(canonicalIp("127.1"), "127.0.0.1", "an HTTP client's spelling of 127.0.0.1");
  t.equal(canonicalIp("localhost"), null, "a name is not an address");
});

t.test("which listeners a connection to the URL's address may land on", async (t) => {
  const all = [...parseProcNetTcp(TCP, "inet"), ...parseProcNetTcp(TCP6, "inet6")];
  const on = (host: string, port: number) =>
    all.filter((l: ListeningSocket) => l.port === port && covers(l, host)).map((l) => l.address);
  t.same(on("127.0.0.1", 10249), ["127.0.0.1", "::ffff:127.0.0.1"], "never the node address's socket");
  t.same(on("10.77.0.2", 10249), ["10.77.0.2"]);
  t.same(on("127.0.0.1", 10256), ["0.0.0.0", "::"], "the wildcards of both families");
  t.same(on("::1", 10249), ["::1"]);
  t.same(on("::1", 10256), ["::"], "an IPv4 wildcard takes no IPv6 connection");
  t.same(on("::ffff:127.0.0.1", 10249), ["127.0.0.1", "::ffff:127.0.0.1"]);
});
