import { readFileSync } from "node:fs";
import type { NodeReport } from "../../agent/report/schema.js";
import { parseIpvsProc } from "../../agent/parse/ipvs-proc.js";
import { parseIpvsStats } from "../../agent/parse/ipvs-stats.js";
import { parseIpvsadmTimeout } from "../../agent/parse/ipvsadm-timeout.js";
import { parseKubeIpvs0Json } from "../../agent/parse/kube-ipvs0.js";
import { parseConfigz } from "../../agent/parse/kube-proxy-configz.js";
import { parseKubeProxyMetrics } from "../../agent/parse/kube-proxy-metrics.js";
import { parseProxyMode } from "../../agent/parse/kube-proxy-mode.js";
import { parseOsRelease } from "../../agent/parse/os-release.js";
import { reportOf } from "./reports.js";
import { ipvsNode, kernel } from "./rules.js";
import type { Result } from "../../common/result.js";

// A node still on ipvs mode, its facts parsed by the agent's own parsers from recorded fixtures:
// /proc/net/ip_vs and ipvsadm's timeouts (test/fixtures/ipvs/kube-small), IPVS totals
// (ipvs/stats/traffic), kube-ipvs0 as `ip -j addr` printed it (ipvs/kube-ipvs0/present.json),
// kube-proxy v1.31's /proxyMode, /configz and /metrics (kube-proxy/recorded/ipvs-v1.31, a stand-in's
// answers: see that folder's README) and Debian 12's os-release. The facts no fixture records
// (addresses, sysctls, modules, netfilter) are test/helpers/rules.ts's ipvs node.

const FIXTURES = new URL("../fixtures/", import.meta.url);
const text = (path: string) => readFileSync(new URL(path, FIXTURES), "utf8");

function value<T>(what: string, p: Result<T>): T {
  if (!p.ok) throw new Error(`recorded fixture ${what} no longer parses: ${p.error}`);
  return p.value;
}

/** When the recorded node's scan ended; kube-proxy's recorded sync times are from the same day. */
export const RECORDED_SCAN_END = new Date("2026-11-29T12:00:00Z");

export function recordedIpvsNode(): NodeReport {
  const table = value("ip_vs", parseIpvsProc(text("ipvs/kube-small/proc/net/ip_vs")));
  const kp = "kube-proxy/recorded/ipvs-v1.31";
  const facts = ipvsNode({
    kernel: kernel("6.1.0-18-amd64"),
    osRelease: {
      source: "/etc/os-release",
      ...value("os-release", parseOsRelease(text("os-release/debian-12/etc/os-release"))),
    },
    ipvs: {
      available: true,
      virtualServerCount: table.virtualServers.length,
      realServerCount: table.realServerCount,
      schedulers: table.schedulers,
      virtualServers: table.virtualServers,
      timeouts: value("timeouts", parseIpvsadmTimeout(text("ipvs/kube-small/ipvsadm-L-timeout.txt"))),
      stats: value("ip_vs_stats", parseIpvsStats(text("ipvs/stats/traffic/proc/net/ip_vs_stats"))),
    },
    kubeIpvs0: value("kube-ipvs0", parseKubeIpvs0Json(text("ipvs/kube-ipvs0/present.json"))),
    proxyMode: value("proxyMode", parseProxyMode(text(`${kp}/proxyMode`))),
    configz: value("configz", parseConfigz(text(`${kp}/configz.json`))),
    kubeProxyMetrics: value("metrics", parseKubeProxyMetrics(text(`${kp}/metrics.txt`))),
  });
  return reportOf(facts, {}, RECORDED_SCAN_END);
}
