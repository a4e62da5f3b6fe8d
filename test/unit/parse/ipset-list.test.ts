import t from "tap";
import { readFileSync } from "node:fs";
import { KUBE_PROXY_IPSETS, ipv6IpsetName, isKubeProxyIpset } from "../../../agent/facts/owners.js";
import { parseIpsetNames, parseIpsetTerse } from "../../../agent/parse/ipset-list.js";

const fixture = (name: string) =>
  readFileSync(new URL(`../../fixtures/ipvs/${name}`, import.meta.url), "utf8");

t.test("ipset list -terse: kube-proxy's sets for both families and three others", async (t) => {
  const r = parseIpsetTerse(fixture("ipsets/kube/ipset-list-terse.txt"));
  if (!r.ok) return t.fail(r.error);
  const sets = r.value;
  t.equal(sets.length, 37);
  const byName = new Map(sets.map((s) => [s.name, s]));
  t.match(byName.get("KUBE-CLUSTER-IP"), {
    type: "hash:ip,port",
    revision: 6,
    family: "inet",
    references: 1, // the iptables rule that matches it
    entries: 3,
  });
  t.match(byName.get("KUBE-6-LOAD-BALANCER-SOURCE-CID"), { type: "hash:ip,port,net", family: "inet6" });
  t.match(byName.get("KUBE-NODE-PORT-TCP"), { type: "bitmap:port", family: null, entries: 1 });
  t.match(byName.get("KUBE-NODE-PORT-TCP")?.header, /^range 0-65535$/);
  t.match(byName.get("f2b-sshd"), { type: "hash:ip", family: "inet", entries: 2, references: 0 });
  t.match(byName.get("KUBE-CUSTOM-ALLOW"), { type: "hash:net", family: "inet6", entries: 0 });

  const kube = sets.filter((s) => isKubeProxyIpset(s.name)).map((s) => s.name);
  t.equal(kube.length, 34, "17 sets in each family");
  t.same(
    sets.filter((s) => !isKubeProxyIpset(s.name)).map((s) => s.name),
    ["f2b-sshd", "cali40all-ipam-pools", "KUBE-CUSTOM-ALLOW"],
    "a KUBE-* look-alike is not kube-proxy's",
  );
  for (const s of sets.filter((x) => isKubeProxyIpset(x.name))) {
    const spec = KUBE_PROXY_IPSETS.find((k) => k.name === s.name || ipv6IpsetName(k.name) === s.name);
    t.equal(s.type, spec?.type, `${s.name} has kube-proxy's type`);
  }
});

t.test("the full listing (members) and the name-only listing give the same sets", async (t) => {
  const terse = parseIpsetTerse(fixture("ipsets/kube/ipset-list-terse.txt"));
  const full = parseIpsetTerse(fixture("ipsets/kube/ipset-list.txt"));
  const names = parseIpsetNames(fixture("ipsets/kube/ipset-list-name.txt"));
  if (!terse.ok || !full.ok || !names.ok) return t.fail("unparsable fixture");
  t.same(
    full.value.map((s) => [s.name, s.entries]),
    terse.value.map((s) => [s.name, s.entries]),
  );
  t.same(
    names.value,
    terse.value.map((s) => s.name),
  );
});

t.test("no sets: empty output", async (t) => {
  t.same(parseIpsetTerse(fixture("ipsets/none/ipset-list-terse.txt")), { ok: true, value: [] });
  t.same(parseIpsetNames(""), { ok: true, value: [] });
});

t.test("kube-proxy's IPv6 names: KUBE-6-*, two cut to ipset's 31 characters", async (t) => {
  const v6 = KUBE_PROXY_IPSETS.filter((s) => !s.legacy).map((s) => ipv6IpsetName(s.name));
  t.ok(v6.every((n) => n.startsWith("KUBE-6-") && n.length <= 31));
  t.same(
    v6.filter((n, i) => n !== `KUBE-6-${KUBE_PROXY_IPSETS[i]!.name.slice(5)}`),
    ["KUBE-6-LOAD-BALANCER-SOURCE-CID", "KUBE-6-NODE-PORT-LOCAL-SCTP-HAS"],
  );
  // ipset itself refuses the uncut name, which is why kube-proxy cuts it.
  t.match(
    fixture("ipsets/kube/ipset-create-too-long.txt.stderr"),
    /setname 'KUBE-6-LOAD-BALANCER-SOURCE-CIDR' is longer than 31 characters/,
  );
  t.ok(isKubeProxyIpset("KUBE-NODE-PORT-SCTP"), "a legacy name still counts");
  t.notOk(isKubeProxyIpset("KUBE-6-LOAD-BALANCER-SOURCE-CIDR"), "no set can have that name");
  t.notOk(isKubeProxyIpset("kube-cluster-ip"));
});

t.test("garbage and truncated listings are typed errors", async (t) => {
  const good = fixture("ipsets/kube/ipset-list-terse.txt");
  const cutInBlock = good.slice(0, good.indexOf("Size in memory"));
  const bad: Record<string, RegExp> = {
    [cutInBlock]: /has no sizeInMemory/,
    [good.slice(0, good.indexOf("Revision") + 4)]: /line 3/,
    "Type: hash:ip\n": /before any Name/,
    [good.replace("References: 1", "References: one")]: /not a number/,
    [good.replace(/Number of entries: \d+\n/g, "")]: /no "Number of entries"/,
    "ipset v7.17: Cannot open session to kernel.\n": /line 1/,
  };
  for (const [text, why] of Object.entries(bad)) {
    const r = parseIpsetTerse(text);
    t.equal(r.ok, false, text.slice(0, 40));
    if (!r.ok) t.match(r.error, why);
  }
  t.equal(parseIpsetNames("KUBE-6-LOAD-BALANCER-SOURCE-CIDR\n").ok, false, "longer than ipset allows");
  t.equal(parseIpsetNames("two words\n").ok, false);
});
