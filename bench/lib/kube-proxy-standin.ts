// The kube-proxy STAND-IN (test/standins/kube-proxy.ts, built into dist/) for benchmarks run in a
// namespace where no real kube-proxy runs: nftables mode, v1.34.1, last sync two minutes ago and
// nothing pending (the steady state), so the agent's scan cache has kube-proxy's counters to go by.
// `scenario` overrides the stand-in's scenario fields (the replay's ipvs mode).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export async function kubeProxyStandin(
  repo: string,
  scenario: Record<string, unknown> = {},
): Promise<{ url: string; healthUrl: string; stop: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), "scan-steady-"));
  const file = join(dir, "scenario.json");
  // A kube-proxy that last synced two minutes ago and has nothing pending: the steady state.
  writeFileSync(
    file,
    JSON.stringify({
      mode: "nftables",
      version: "v1.34.1",
      metricsAddress: "127.0.0.1:0",
      healthAddress: "127.0.0.1:0",
      lastSync: { unix: Math.floor(Date.now() / 1000) - 120 },
      ...scenario,
    }),
  );
  const child = spawn(process.execPath, [`${repo}/dist/test/standins/kube-proxy.js`, file], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const [port, healthPort] = await new Promise<[number, number]>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /ready (\d+) (\d+)/.exec(out);
      if (m) resolve([Number(m[1]), Number(m[2])]);
    });
    child.once("exit", (c) => reject(new Error(`stand-in exited ${c}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    healthUrl: `http://127.0.0.1:${healthPort}`,
    stop: () => {
      child.kill("SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
