import t from "tap";
import fc from "fast-check";
import { canonicalIp, formatIPv6, ipv4FromHex, ipv6FromFullText } from "../../../agent/parse/ip-text.js";

t.test("IPv4 from /proc hex", async (t) => {
  t.equal(ipv4FromHex("0A600001"), "10.96.0.1");
  t.equal(ipv4FromHex("C0A83264"), "192.168.50.100");
  t.equal(ipv4FromHex("FFFFFFFF"), "255.255.255.255");
  t.equal(ipv4FromHex("00000000"), "0.0.0.0");
  for (const bad of ["", "0A6000", "0A60000G", "0A6000010"]) t.equal(ipv4FromHex(bad), null, bad);
});

t.test("IPv6 compressed as glibc inet_ntop writes it", async (t) => {
  const cases: [string, string][] = [
    ["fd00:0010:0096:0000:0000:0000:0000:0001", "fd00:10:96::1"],
    ["2001:0db8:0000:0000:0001:0000:0000:0001", "2001:db8::1:0:0:1"], // tie: the first run
    ["2001:0db8:0000:0001:0000:0000:0000:0001", "2001:db8:0:1::1"], // the longer run
    ["2001:0db8:0000:0001:0001:0001:0001:0001", "2001:db8:0:1:1:1:1:1"], // one zero: not compressed
    ["2001:0db8:0001:0002:0003:0004:0005:0006", "2001:db8:1:2:3:4:5:6"],
    ["0000:0000:0000:0000:0000:0000:0000:0000", "::"],
    ["0000:0000:0000:0000:0000:0000:0000:0001", "::1"],
    ["fe80:0000:0000:0000:0000:0000:0000:0000", "fe80::"],
    ["0000:0000:0000:0000:0000:ffff:0a60:0001", "::ffff:10.96.0.1"], // IPv4-mapped
    ["0000:0000:0000:0000:0000:0000:0a60:0001", "::10.96.0.1"], // IPv4-compatible
    ["0001:0000:0000:0000:0000:0000:0000:0000", "1::"],
    ["FD00:0010:0096:0000:0000:0000:0000:000A", "fd00:10:96::a"],
  ];
  for (const [full, want] of cases) t.equal(ipv6FromFullText(full), want, full);
  for (const bad of [
    "",
    "fd00::1",
    "fd00:0010:0096:0000:0000:0000:0000",
    "gd00:0010:0096:0000:0000:0000:0000:0001",
  ]) {
    t.equal(ipv6FromFullText(bad), null, bad);
  }
});

t.test("canonicalIp accepts every text form and rejects non-addresses", async (t) => {
  t.equal(canonicalIp("10.96.0.1"), "10.96.0.1");
  t.equal(canonicalIp("FD00:10:96:0:0:0:0:1"), "fd00:10:96::1");
  t.equal(canonicalIp("2001:db8:0:0:1::1"), "2001:db8::1:0:0:1");
  t.equal(canonicalIp("::ffff:10.96.0.1"), "::ffff:10.96.0.1");
  t.equal(canonicalIp("::ffff:a60:1"), "::ffff:10.96.0.1");
  t.equal(canonicalIp("1:2:3:4:5:6:10.96.0.1"), "1:2:3:4:5:6:a60:1");
  t.equal(canonicalIp("::"), "::");
  for (const bad of [
    "",
    "10.96.0",
    "10.96.0.256",
    "1::2::3",
    ":1:2:3:4:5:6:7",
    "1:2:3:4:5:6:7:8:9",
    "fd00::1%eth0",
    "x",
  ]) {
    t.equal(canonicalIp(bad), null, bad);
  }
  // Any 8 groups: formatting then reading back is the identity, in every spelling.
  fc.assert(
    fc.property(
      fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 0xffff })), { minLength: 8, maxLength: 8 }),
      (g) => {
        const text = formatIPv6(g);
        const full = g.map((x) => x.toString(16).padStart(4, "0")).join(":");
        return canonicalIp(text) === text && canonicalIp(full) === text && ipv6FromFullText(full) === text;
      },
    ),
  );
});
