// No alert fires on a healthy node: the agent's /metrics for a node's report, through every shipped alert
// (promtool test rules, test/helpers/quiet-alerts.ts). The kernel-state profiles (test/kernel/profiles-*)
// run the same check on the nodes they build; this file holds the cases that need no kernel.
import t from "tap";
import { nodeMetricsText } from "../../../agent/metrics/node-metrics.js";
import type { ProbeError } from "../../../agent/facts/probe-error.js";
import { emptyFacts, noKernelState } from "../../helpers/facts.js";
import { alertsOnScrape } from "../../helpers/quiet-alerts.js";
import { reportOf } from "../../helpers/reports.js";
import { ipvsNode, kernel } from "../../helpers/rules.js";

const refused = (port: number): ProbeError => ({
  kind: "unreachable",
  message: `connect ECONNREFUSED 127.0.0.1:${port}`,
});
// Nothing listens on kube-proxy's ports: each of its four endpoint probes fails as "unreachable".
const kubeProxyAbsent = {
  "kube-proxy-mode": refused(10249),
  "kube-proxy-configz": refused(10249),
  "kube-proxy-metrics": refused(10249),
  "kube-proxy-health": refused(10256),
} as const;

t.test("a kube-proxy-free node (Cilium or Calico eBPF replacing it, or kube-proxy removed)", async (t) => {
  const r = reportOf({ ...emptyFacts(), ...noKernelState, kernel: kernel("6.8.0") }, kubeProxyAbsent);
  t.equal(r.phase, "none", "the agent places it as kube-proxy-free");
  t.equal(r.verdict, "clean");
  t.equal(r.probes.filter((p) => !p.ok).length, 4, "the four kube-proxy probes failed, as they must here");
  t.equal(alertsOnScrape(await nodeMetricsText(r), "worker-1"), null, "no alert fires");
});

t.test(
  "a node whose kube-proxy stopped answering while its ipvs state stays: the probe alert fires",
  async (t) => {
    const r = reportOf(ipvsNode(), kubeProxyAbsent);
    t.equal(r.phase, "ipvs", "placed from kernel state");
    const fired = alertsOnScrape(await nodeMetricsText(r), "worker-2");
    t.not(fired, null, "an alert fires");
    t.match(fired ?? "", /ProxyscopeProbeFailing/);
    t.match(fired ?? "", /kube-proxy-mode/);
  },
);
