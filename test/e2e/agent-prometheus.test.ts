// The agent as a real process, scraped by a real Prometheus every second; a known kube-proxy scenario
// (the STAND-IN kube-proxy, nftables mode with failing syncs) read back through Prometheus' query API.
import { readFileSync } from "node:fs";
import t from "tap";
import { NodeReport } from "../../agent/report/schema.js";
import { promtoolCheckMetrics, startPrometheus } from "../helpers/prometheus.js";
import { startStandin } from "../helpers/standin.js";
import { agentBuilt, startAgent } from "./agent-process.js";

const scenario = JSON.parse(
  readFileSync(
    new URL("../fixtures/kube-proxy/scenarios/nftables-failing-v1.37.json", import.meta.url),
    "utf8",
  ),
) as object;

t.test(
  "Prometheus scrapes the agent and sees the scenario",
  { skip: !agentBuilt() && "run npx tsc -p . first" },
  async (t) => {
    const kp = await startStandin(scenario);
    t.teardown(() => kp.stop());
    const agent = await startAgent({
      args: [
        "--scan-interval-s",
        "2",
        "--kube-proxy-metrics-url",
        kp.metricsUrl,
        "--kube-proxy-health-url",
        kp.healthUrl,
      ],
    });
    t.teardown(() => agent.stop());
    await agent.scans(1);
    const prom = await startPrometheus({
      jobs: [{ job: "proxyscope-agent", targets: [`127.0.0.1:${agent.port}`] }],
    });
    t.teardown(() => prom.stop());

    await prom.waitFor('up{job="proxyscope-agent"}', (s) => s[0]?.value === 1);
    const phase = await prom.waitFor("proxyscope_node_phase == 1", (s) => s.length === 1);
    t.equal(phase[0]!.metric.phase, "nftables", "the phase kube-proxy's /proxyMode answered");
    t.equal((await prom.query("count(proxyscope_node_phase)"))[0]?.value, 5, "one series per phase");
    t.equal((await prom.query("count(proxyscope_node_verdict)"))[0]?.value, 7, "one series per verdict");
    t.equal((await prom.query("proxyscope_kube_proxy_sync_failures_total"))[0]?.value, 42);
    t.equal((await prom.query("proxyscope_kube_proxy_cleanup_failures_total"))[0]?.value, 2);
    const age =
      (await prom.query("time() - proxyscope_kube_proxy_last_sync_timestamp_seconds"))[0]?.value ?? 0;
    t.ok(age >= 900, `last sync age ${age} s (the stand-in's last sync was 900 s before the scan)`);
    const failing = await prom.query('proxyscope_finding{id="kube-proxy-sync-failing"}');
    t.same(
      failing.map((s) => [s.metric.severity, s.value]),
      [["critical", 1]],
    );
    t.equal((await prom.query('proxyscope_build_info{version!=""}')).length, 1);
    const info = await prom.query("proxyscope_node_info");
    t.equal(info.length, 1, "one info series");
    t.equal(info[0]?.metric.phase, undefined, "the info series carries no label that the switch changes");
    t.equal(info[0]?.metric.kube_proxy_version, "v1.37.0", "kube-proxy's version from its build info");
    t.same(
      (await prom.query('proxyscope_finding_active{id="kube-proxy-sync-failing"}')).map((s) => s.value),
      [1],
    );
    t.ok(
      (await prom.query("proxyscope_finding_active == 0")).length > 0,
      "inactive findings are 0 series, so == 0 queries work",
    );
    await prom.waitFor("proxyscope_scans_total", (s) => (s[0]?.value ?? 0) >= 1);

    // Prometheus and /report tell the same story, probe by probe and finding by finding.
    const res = await agent.get("/report");
    const report = NodeReport.parse(JSON.parse(res.body));
    // A newer scan may have been scraped meanwhile; the scenario does not change, so neither do these.
    const success = await prom.query("proxyscope_probe_success");
    t.same(
      Object.fromEntries(success.map((s) => [s.metric.probe, s.value])),
      Object.fromEntries(report.probes.map((p) => [p.name, p.ok ? 1 : 0])),
      "proxyscope_probe_success matches /report",
    );
    const findings = await prom.query("proxyscope_finding");
    t.same(
      findings.map((s) => s.metric.id).sort(),
      report.findings.map((f) => f.id).sort(),
      "proxyscope_finding matches /report",
    );
    for (const s of await prom.query('count by (__name__) ({__name__=~"proxyscope_.*"})')) {
      t.ok(s.value <= 64, `${s.metric.__name__}: ${s.value} series`);
    }

    const exposition = await agent.get("/metrics");
    const check = await promtoolCheckMetrics(exposition.body);
    t.equal(check.output, "", "promtool check metrics reports nothing");
    t.equal(check.exitCode, 0);
  },
);
