import t from "tap";
import { ids, ipvsNode, judge, nftNode, NOW } from "../../../helpers/rules.js";
import { metrics } from "../../../helpers/facts.js";
import { findingPageUrl } from "../../../../common/finding-page.js";
import type { NodeFacts } from "../../../../agent/report/schema.js";
import type { ProbeError } from "../../../../agent/facts/probe-error.js";

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

t.test(
  "the agent's own nft killed by SIGSEGV reading sets: raised from the crash, whatever the host package says",
  async (t) => {
    const crash = new Map<string, ProbeError>([
      [
        "nftables",
        {
          kind: "exec-failed" as const,
          message: "nft could not run: killed by SIGSEGV",
          command: "nft -j -t list sets",
        },
      ],
    ]);
    const seen = (node: NodeFacts, failed = crash) =>
      judge(node, failed, NOW).findings.find((f) => f.id === ID);
    const b = seen(ipvsNode({ nftVersion: dpkg("1.0.6"), kubeProxyMetrics: kubeProxy("v1.34.6") }));
    t.equal(b?.severity, "error");
    t.equal(b?.blocksMigration, true);
    t.match(b?.evidence.observed, /nft -j -t list sets .*SIGSEGV/);
    t.match(b?.title, /^nft crashed reading this node's sets/);
    const a = seen(nftNode({ nftVersion: dpkg("1.0.6"), kubeProxyMetrics: kubeProxy("v1.35.4") }));
    t.equal(a?.severity, "warning");
    t.equal(seen(nftNode({ nftVersion: dpkg("1.0.6"), kubeProxyMetrics: kubeProxy("v1.37.0") })), undefined);
    // Another failure of the same read says nothing about the sets; nor does no failure.
    const timeout = new Map<string, ProbeError>([
      ["nftables", { kind: "timeout" as const, message: "nft timed out", command: "nft -j -t list sets" }],
    ]);
    t.equal(
      seen(ipvsNode({ nftVersion: dpkg("1.0.6"), kubeProxyMetrics: kubeProxy("v1.34.6") }), timeout),
      undefined,
    );
    t.equal(
      seen(ipvsNode({ nftVersion: dpkg("1.0.6"), kubeProxyMetrics: kubeProxy("v1.34.6") }), new Map()),
      undefined,
    );
    // The host version's own path keeps its wording and carries no observed crash.
    t.equal(before(dpkg("1.1.3"), "v1.34.6")?.evidence.observed, undefined);
  },
);

t.test(
  "the witness of kube-proxy's image nft killed by SIGSEGV listing sets: raised from it, the agent's own read intact",
  async (t) => {
    type Witness = NonNullable<NodeFacts["kubeProxyNft"]>;
    const witness = (w: Partial<Witness>): Witness => ({
      outcome: "crashed",
      version: "1.0.6",
      command: "kube-proxy-nft -j -t list sets",
      signal: "SIGSEGV",
      detail: "kube-proxy-nft could not run: killed by SIGSEGV",
      ...w,
    });
    const node = (kp: string, w: Witness, phase = ipvsNode) =>
      found(phase({ nftVersion: dpkg("1.0.6"), kubeProxyMetrics: kubeProxy(kp), kubeProxyNft: w }));
    const b = node("v1.34.6", witness({}));
    t.equal(b?.severity, "error", "before #137501: blocks the switch");
    t.equal(b?.blocksMigration, true);
    t.match(
      b?.evidence.observed,
      /kube-proxy-nft -j -t list sets \(the witness of kube-proxy's image nft 1\.0\.6.*SIGSEGV/,
    );
    t.match(b?.title, /^nft 1\.0\.6 \(as in kube-proxy's image\) crashed reading this node's sets/);
    t.equal(b?.evidence.nftVersion, "1.0.6", "the host's package still says 1.0.6");
    t.equal(node("v1.33.10", witness({}), nftNode)?.severity, "critical", "in nftables mode, unfixed");
    t.equal(node("v1.35.4", witness({}))?.severity, "warning", "the listing fix only");
    t.equal(node("v1.37.0", witness({})), undefined, "kube-proxy's image nft 1.0.6.1: exempt");
    // Only a crash is evidence: a witness that listed, failed otherwise, is absent or died by another
    // signal says nothing about the sets (and "not present" is never "no crash": the host decides).
    for (const w of [
      witness({ outcome: "ok", detail: "listed" }),
      witness({ outcome: "failed", detail: "timeout: did not finish" }),
      witness({ outcome: "not-present", version: null, detail: "not asked" }),
      witness({ signal: "SIGKILL" }),
    ]) {
      t.equal(node("v1.34.6", w), undefined, `${w.outcome} ${w.signal ?? ""}`);
    }
    const absentButNewHost = found(
      ipvsNode({
        nftVersion: dpkg("1.1.3"),
        kubeProxyMetrics: kubeProxy("v1.34.6"),
        kubeProxyNft: witness({ outcome: "not-present", version: null }),
      }),
    );
    t.equal(absentButNewHost?.severity, "error", "no witness: the host's package still raises it");
    t.equal(absentButNewHost?.evidence.observed, undefined);
  },
);
