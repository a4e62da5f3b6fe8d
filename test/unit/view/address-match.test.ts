// The address tests the view runs for every Service IP (isServiceAddress, onLinkOfOtherInterfaces)
// answer without BlockList where they can; BlockList, as they used it before, is the oracle: the
// same answer for the forms a listed range can be written in, and for random addresses.
import { BlockList, isIPv6 } from "node:net";
import t from "tap";
import { isServiceAddress } from "../../../agent/view/kube-ipvs0.js";
import { onLinkOfOtherInterfaces } from "../../../agent/view/on-link.js";
import type { NodeFacts } from "../../../agent/report/schema.js";

const NOT_SERVICE = new BlockList();
NOT_SERVICE.addSubnet("fe80::", 10, "ipv6");
NOT_SERVICE.addAddress("::1", "ipv6");
NOT_SERVICE.addSubnet("127.0.0.0", 8, "ipv4");
const oracle = (a: string) => !NOT_SERVICE.check(a, isIPv6(a) ? "ipv6" : "ipv4");

// A fixed generator: the same addresses every run.
let seed = 42;
const rnd = (n: number) => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed % n;
};
const hex = () => rnd(65536).toString(16);

t.test("isServiceAddress agrees with the BlockList it stood for", async (t) => {
  const tricky = [
    ...["127.0.0.1", "127.255.1.1", "12.7.0.1", "1.2.3.4", "0.0.0.0", "0127.0.0.1", "127.1", "1.2.3"],
    ...["::1", "0:0:0:0:0:0:0:1", "0::1", "00::1", "::ffff:127.0.0.1", "::ffff:7f00:1", "::127.0.0.1"],
    ...["fe80::1", "FE80::1", "febf::1", "fec0::1", "fe7f::1", "fe8::1", "0fe80::1", "::", "fd00::1"],
    ...["abc", ""],
  ];
  t.same(
    tricky.filter((a) => isServiceAddress(a) !== oracle(a)),
    [],
  );
  t.equal(isServiceAddress("fe80::1"), false, "a link-local address is the kernel's");
  t.equal(isServiceAddress("::ffff:127.0.0.1"), false, "loopback, IPv4-mapped");
  t.equal(isServiceAddress("10.96.0.1"), true);
  const random = Array.from({ length: 20_000 }, (_, i) => {
    const k = i % 4;
    if (k === 0) return `${rnd(256)}.${rnd(256)}.${rnd(256)}.${rnd(256)}`;
    if (k === 1) return `127.${rnd(256)}.${rnd(256)}.${rnd(256)}`;
    if (k === 2) return `${["fe80", "febf", "fec0", "fe7f", "0", "", hex()][rnd(7)]}:${hex()}::${hex()}`;
    return Array.from({ length: 8 }, hex).join(":");
  });
  t.same(
    random.filter((a) => isServiceAddress(a) !== oracle(a)),
    [],
  );
});

t.test("onLinkOfOtherInterfaces: the prefix test agrees with a BlockList of the same prefix", async (t) => {
  const ip = () =>
    `${[10, 172, 192, rnd(256)][rnd(4)]}.${[18, 168, 0, rnd(256)][rnd(4)]}.${rnd(3)}.${rnd(256)}`;
  let onLink = 0;
  for (let k = 0; k < 200; k++) {
    const interfaces = [
      { name: "lo", addresses: [{ family: "inet", address: "127.0.0.1", prefixLen: 8 }] },
      ...[0, 1, 2].map((j) => ({
        name: `eth${j}`,
        addresses: [{ family: "inet", address: ip(), prefixLen: k === 0 && j === 0 ? 0 : rnd(33) }],
      })),
      { name: "kube-ipvs0", addresses: [] },
    ];
    const ips = Array.from({ length: 200 }, ip);
    const got = onLinkOfOtherInterfaces(
      { interfaces } as unknown as NonNullable<NodeFacts["addresses"]>,
      ips,
      "kube-ipvs0",
    );
    const others = interfaces.filter((i) => i.name !== "kube-ipvs0");
    const own = new Set(others.flatMap((i) => i.addresses.map((a) => a.address)));
    const prefixes = others
      .filter((i) => i.name !== "lo")
      .flatMap((i) =>
        i.addresses
          .filter((a) => a.prefixLen < 32)
          .map((a) => {
            const list = new BlockList();
            list.addSubnet(a.address, a.prefixLen, "ipv4");
            return { iface: i.name, prefix: `${a.address}/${a.prefixLen}`, list };
          }),
      );
    const want = ips.flatMap((x) => {
      if (own.has(x)) return [];
      const hit = prefixes.find((p) => p.list.check(x, "ipv4"));
      return hit ? [{ ip: x, iface: hit.iface, prefix: hit.prefix }] : [];
    });
    onLink += want.length;
    t.same(got, want, `interfaces ${JSON.stringify(interfaces.slice(1, 4).map((i) => i.addresses[0]))}`);
  }
  t.ok(onLink > 1000, `the cases hold addresses on link (${onLink}) and off it`);
});
