import t from "tap";
import type { KubeProxyModeOptions } from "../../../agent/probes/kube-proxy-mode.js";
import { probeOptions } from "../../../agent/probes/options.js";
import { defineProbe, type Probe } from "../../../agent/probes/types.js";
import { runProbes } from "../../../agent/scan.js";
import { probeContext, probeSettings } from "../../helpers/probe-context.js";

// Each probe declares its own options in its file; probes/options.ts builds them from the agent's
// settings in one place, and the scan hands each probe its own and nothing else.

t.test("the settings become each probe's own options", async (t) => {
  const parity = { path: "/var/lib/proxyscope/snap.json", maxAgeS: 60, node: "n1" };
  const on = probeOptions(
    probeSettings({
      kubeProxyMetricsUrl: "http://127.0.0.1:10249",
      kubeProxyHealthUrl: "http://0.0.0.0:10256",
      nodeIPs: ["192.168.77.2"],
      parity,
    }),
  );
  t.same(on["kube-proxy-mode"], { metricsUrl: "http://127.0.0.1:10249" });
  t.same(on["kube-proxy-configz"], { metricsUrl: "http://127.0.0.1:10249" });
  t.same(on["kube-proxy-metrics"], { metricsUrl: "http://127.0.0.1:10249" });
  t.same(on["kube-proxy-health"], { healthUrl: "http://0.0.0.0:10256" });
  t.same(on.listeners, { metricsUrl: "http://127.0.0.1:10249", healthUrl: "http://0.0.0.0:10256" });
  t.same(on.addresses, { nodeIPs: ["192.168.77.2"] });
  t.same([on.ipvs, on.nftables, on.parity], [{ forParity: true }, { forParity: true }, { snapshot: parity }]);
  const off = probeOptions(probeSettings({ parity: null }));
  t.same(
    [off.ipvs, off.nftables, off.parity],
    [{ forParity: false }, { forParity: false }, { snapshot: null }],
  );
  const absent = probeOptions({ kubeProxyMetricsUrl: "", kubeProxyHealthUrl: "", nodeIPs: [] });
  t.same(absent.parity, { snapshot: null }, "parity absent from the settings: off");
});

t.test("a scan runs each probe with its own options, and one without options with none", async (t) => {
  const seen = new Map<string, unknown>();
  const spy = <N extends "kube-proxy-health" | "kernel">(name: N) =>
    defineProbe(name, {
      async run(_ctx, options: unknown) {
        seen.set(name, options);
        return { ok: false, error: { kind: "io", message: "a stand-in probe reads nothing" } };
      },
    }) as Probe<unknown>;
  await runProbes(
    {
      ...probeContext(),
      ...probeSettings({ kubeProxyHealthUrl: "http://127.0.0.1:10256" }),
      probeTimeoutMs: 30_000,
    },
    [spy("kube-proxy-health"), spy("kernel")],
  );
  t.same(seen.get("kube-proxy-health"), { healthUrl: "http://127.0.0.1:10256" });
  t.same(seen.get("kernel"), {});
});

t.test("the compiler refuses an option a probe did not declare (checked by tsc, run here too)", async (t) => {
  const probe = defineProbe("kube-proxy-mode", {
    async run(ctx, opts: KubeProxyModeOptions) {
      // @ts-expect-error kube-proxy-mode declares metricsUrl only
      void opts.healthUrl;
      // @ts-expect-error the context holds no probe's options
      void ctx.kubeProxyMetricsUrl;
      return { ok: false, error: { kind: "io", message: `not asked: ${opts.metricsUrl}` } };
    },
  });
  // @ts-expect-error a probe with options is never run without them
  void (() => probe.run(probeContext()));
  const r = await probe.run(probeContext(), { metricsUrl: "http://127.0.0.1:1" });
  t.match(r, { ok: false, error: { message: /127\.0\.0\.1:1/ } });
});
