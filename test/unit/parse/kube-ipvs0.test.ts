import t from "tap";
import { readFileSync } from "node:fs";
import { KubeIpvs0Facts } from "../../../agent/facts/ipvs.js";
import { kubeIpvs0FromAddrListing, parseKubeIpvs0Json } from "../../../agent/parse/kube-ipvs0.js";

const fixture = (name: string) =>
  readFileSync(new URL(`../../fixtures/ipvs/kube-ipvs0/${name}`, import.meta.url), "utf8");

t.test("present with kube-proxy's /32 and /128 addresses", async (t) => {
  const r = parseKubeIpvs0Json(fixture("present.json"));
  t.same(r, {
    ok: true,
    value: {
      present: true,
      kind: "dummy",
      operState: "DOWN",
      flags: ["BROADCAST", "NOARP"],
      addresses: [
        { family: "inet", address: "10.96.0.1", prefixLen: 32 },
        { family: "inet", address: "10.96.0.10", prefixLen: 32 },
        { family: "inet", address: "10.96.143.20", prefixLen: 32 },
        { family: "inet6", address: "fd00:10:96::a", prefixLen: 128 },
        { family: "inet6", address: "fd00:10:96::1", prefixLen: 128 },
      ],
    },
  });
  if (r.ok) KubeIpvs0Facts.parse(r.value);
});

t.test("present without addresses", async (t) => {
  t.same(parseKubeIpvs0Json(fixture("empty.json")), {
    ok: true,
    value: { present: true, kind: "dummy", operState: "DOWN", flags: ["BROADCAST", "NOARP"], addresses: [] },
  });
});

t.test("absent: ip printed nothing on stdout (the probe reads its exit status and stderr)", async (t) => {
  t.equal(fixture("absent.json"), "");
  t.equal(fixture("absent.json.exit").trim(), "1");
  t.equal(fixture("absent.json.stderr"), 'Device "kube-ipvs0" does not exist.\n');
  t.equal(parseKubeIpvs0Json(fixture("absent.json")).ok, false);
});

t.test("garbage is a typed error", async (t) => {
  const present = fixture("present.json");
  const link = JSON.parse(present)[0];
  const bad: Record<string, RegExp> = {
    "": /not JSON/,
    [present.slice(0, present.length / 2)]: /not JSON/,
    "[]": /0 links/,
    [JSON.stringify([link, link])]: /2 links/,
    [JSON.stringify([{ ...link, ifname: "eth0" }])]: /expected kube-ipvs0 alone/,
    [JSON.stringify([{ ...link, addr_info: [{ family: "inet" }] }])]: /unexpected shape/,
    [JSON.stringify({ ifname: "kube-ipvs0" })]: /unexpected shape/,
  };
  for (const [text, why] of Object.entries(bad)) {
    const r = parseKubeIpvs0Json(text);
    t.equal(r.ok, false, text.slice(0, 40));
    if (!r.ok) t.match(r.error, why);
  }
});

// The whole-node listing the addresses probe reads (recorded in one state with the `dev` answer).
t.test("from every link's listing: the link's own answer, or absent", async (t) => {
  t.same(
    kubeIpvs0FromAddrListing(fixture("listing-present.json")),
    parseKubeIpvs0Json(fixture("listing-present-dev.json")),
  );
  t.match(kubeIpvs0FromAddrListing(fixture("listing-present.json")), {
    ok: true,
    value: { present: true, kind: "dummy" },
  });
  t.same(kubeIpvs0FromAddrListing(fixture("listing-absent.json")), {
    ok: true,
    value: { present: false, kind: null, operState: null, flags: [], addresses: [] },
  });
  t.match(kubeIpvs0FromAddrListing("[1: lo"), { ok: false, error: /not JSON/ });
  t.match(kubeIpvs0FromAddrListing('{"ifname": "kube-ipvs0"}'), { ok: false, error: /not a list of links/ });
  t.match(kubeIpvs0FromAddrListing('[{"ifname": "kube-ipvs0", "flags": []}]'), {
    ok: false,
    error: /unexpected shape/,
  });
  t.match(
    kubeIpvs0FromAddrListing(
      JSON.stringify([
        ...JSON.parse(fixture("listing-present-dev.json")),
        ...JSON.parse(fixture("listing-present-dev.json")),
      ]),
    ),
    {
      ok: false,
      error: /2 links/,
    },
  );
});
