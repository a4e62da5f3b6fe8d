import t from "tap";
import { ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";
import { metrics } from "../../../helpers/facts.js";

t.test("host nft 1.1.3 with a kube-proxy predating the fix", async (t) => {
  const at = (nft: string, kp: string) =>
    ids(
      judge(
        ipvsNode({
          nftVersion: { version: nft, source: "dpkg" },
          kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW }, kp),
        }),
        new Map(),
        NOW,
      ),
    ).includes("nft-host-newer-than-kube-proxy-supports");
  t.equal(at("1.1.3", "v1.33.10"), true);
  t.equal(at("1.1.3", "v1.33.11"), false);
  t.equal(at("1.1.5", "v1.34.6"), true);
  t.equal(at("1.1.5", "v1.35.4"), false);
  t.equal(at("1.1.3", "v1.32.9"), true);
  t.equal(at("1.1.3", "v1.36.0"), false);
  t.equal(at("1.1.1", "v1.32.9"), false);
});
