import t from "tap";
import { ids, ipvsNode, judge, nftNode, NOW } from "../../../helpers/rules.js";
import { metrics } from "../../../helpers/facts.js";
import { findingPageUrl } from "../../../../common/finding-page.js";
import type { NodeFacts } from "../../../../agent/report/schema.js";

const ID = "nft-host-newer-than-kube-proxy-supports";
type Nft = NonNullable<NodeFacts["nftVersion"]>;
const dpkg = (version: string): Nft => ({ version, source: "dpkg", installed: true });
const kubeProxy = (kp: string) => metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW }, kp);
const found = (node: NodeFacts) => judge(node, new Map(), NOW).findings.find((f) => f.id === ID);
const before = (nft: Nft, kp: string) =>
  found(ipvsNode({ nftVersion: nft, kubeProxyMetrics: kubeProxy(kp) }));
const after = (nft: Nft, kp: string) => found(nftNode({ nftVersion: nft, kubeProxyMetrics: kubeProxy(kp) }));

t.test("no fix at all (before #137501): blocks before the switch, critical after", async (t) => {
  for (const [nft, kp] of [
    ["1.1.3", "v1.33.10"],
    ["1.1.5", "v1.34.6"],
    ["1.1.3", "v1.35.3"],
    ["1.1.3", "v1.32.9"],
  ] as const) {
    const f = before(dpkg(nft), kp);
    t.equal(f?.severity, "error", `${nft} + ${kp}`);
    t.equal(f?.blocksMigration, true);
    t.match(f?.evidence.kubeProxyFix, /^none/);
    t.equal(after(dpkg(nft), kp)?.severity, "critical");
  }
});

t.test(
  "the listing fix (#137501) without the image fix (#140405): a warning and a canary, not a pass",
  async (t) => {
    for (const kp of ["v1.33.11", "v1.34.7", "v1.35.4", "v1.36.0", "v1.36.0-eksbuild.9", "v1.36.3"]) {
      const f = before(dpkg("1.1.3"), kp);
      t.equal(f?.severity, "warning", kp);
      t.equal(f?.blocksMigration, false);
      t.match(f?.evidence.kubeProxyFix, /#137501 only/);
      t.match(f?.remedy, /canary/);
      t.equal(after(dpkg("1.1.3"), kp)?.severity, "warning");
    }
    t.match(before(dpkg("1.1.3"), "v1.36.0")?.evidence.threads, /#136786.*#140405.*#140898/);
    t.equal(
      before(dpkg("1.1.3"), "v1.36.0")?.reference,
      findingPageUrl("nft-host-newer-than-kube-proxy-supports"),
    );
  },
);

t.test("kube-proxy v1.37.0+ carries nft 1.0.6.1 (#140405): nothing", async (t) => {
  t.equal(before(dpkg("1.1.5"), "v1.37.0"), undefined);
  t.equal(before(dpkg("1.1.5"), "v1.38.2"), undefined);
  t.equal(after(dpkg("1.1.5"), "v1.37.1"), undefined);
});

t.test(
  "host nft 1.1.2 writes the set user data too (azurelinux#17760); 1.1.1 and older do not",
  async (t) => {
    t.equal(before(dpkg("1.1.2"), "v1.35.0")?.severity, "error");
    t.equal(before(dpkg("1.1.1"), "v1.32.9"), undefined);
    t.equal(before(dpkg("1.0.6"), "v1.33.1"), undefined);
  },
);

t.test(
  "a host with no nft (Bottlerocket) is not installed: never this finding, nor nft-too-old",
  async (t) => {
    const absent: Nft = { version: null, source: "none", installed: false, detail: "not installed" };
    const j = judge(
      ipvsNode({ nftVersion: absent, kubeProxyMetrics: kubeProxy("v1.36.0-eksbuild.9") }),
      new Map(),
      NOW,
    );
    t.notOk(ids(j).includes(ID));
    t.notOk(ids(j).includes("nft-too-old"));
    t.equal(after(absent, "v1.36.0-eksbuild.9"), undefined);
    // Unknown (an RPM database it cannot read) is not "newer" either.
    t.equal(before({ version: null, source: "none" }, "v1.35.0"), undefined);
  },
);
