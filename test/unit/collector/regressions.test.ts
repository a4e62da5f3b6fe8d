// Defects the collector's property tests and fault matrix found, one test each, so a fix cannot
// quietly come undone. Each names the input that used to throw, lie or grow without bound.
import t from "tap";
import { parseKubeProxyConfig } from "../../../collector/parse/kube-proxy-config.js";

t.test("a YAML mapping where kube-proxy expects a string is a typed error, not a throw", async (t) => {
  // String() of {toString: 1} threw a TypeError out of gatherCluster: exit 2, "internal error".
  t.match(parseKubeProxyConfig("mode: {toString: 1}\n"), { ok: false, error: /mode is a mapping/ });
  t.match(parseKubeProxyConfig("mode: [ipvs]\n"), { ok: false, error: /mode is a mapping/ });
  t.match(parseKubeProxyConfig("nodePortAddresses: [{toString: 1}]\n"), {
    ok: false,
    error: /nodePortAddresses holds a mapping/,
  });
  // A self-referencing alias made JSON.stringify throw; a 1 MiB kind became a 1 MiB error.
  t.match(parseKubeProxyConfig("kind: &a [1, *a]\n"), { ok: false, error: /kind is of type object/ });
  const big = parseKubeProxyConfig(`kind: ${"x".repeat(1_000_000)}\n`);
  t.ok(!big.ok && big.error.length < 200, "a bounded error");
  t.match(parseKubeProxyConfig('mode: "nftables"\nnodePortAddresses: [primary, null]\n'), {
    ok: true,
    value: { mode: "nftables", nodePortAddresses: ["primary", "null"] },
  });
});
