import t from "tap";
import { readFileSync } from "node:fs";
import { parseProxyMode } from "../../../agent/parse/kube-proxy-mode.js";

const recorded = (s: string) =>
  readFileSync(new URL(`../../fixtures/kube-proxy/recorded/${s}/proxyMode`, import.meta.url), "utf8");

t.test(
  "recorded answers: the bare mode, no newline; an empty configured mode answers iptables",
  async (t) => {
    t.same(parseProxyMode(recorded("ipvs-v1.31")), { ok: true, value: { mode: "ipvs" } });
    t.same(parseProxyMode(recorded("nftables-failing-v1.37")), { ok: true, value: { mode: "nftables" } });
    t.equal(recorded("iptables-default-v1.33"), "iptables", "no trailing newline on the wire");
    t.same(parseProxyMode(recorded("iptables-default-v1.33")), { ok: true, value: { mode: "iptables" } });
  },
);

t.test("one trailing newline is tolerated, and kept out of the mode", async (t) => {
  t.same(parseProxyMode("nftables\n"), { ok: true, value: { mode: "nftables" } });
  t.same(parseProxyMode("kernelspace"), { ok: true, value: { mode: "kernelspace" } });
});

t.test("anything else is garbage", async (t) => {
  for (const bad of [
    "",
    "\n",
    "ip vs",
    "ipvs\n\n",
    "<html>404</html>",
    "IPVS;",
    " iptables",
    '{"mode":"ipvs"}',
  ]) {
    t.equal(parseProxyMode(bad).ok, false, JSON.stringify(bad));
  }
});
