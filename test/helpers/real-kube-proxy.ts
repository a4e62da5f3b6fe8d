import { type ChildProcess, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { spawnOwned, stopOwned } from "./children.js";
import type { NetNs } from "./netns.js";
import { REPO_ROOT } from "./uml.js";

// The REAL kube-proxy (built by test/kube-proxy/build.mjs, cached outside the checkout) in a network
// namespace, against the API server stand-in (test/standins/apiserver.ts) on 127.0.0.1 inside the same
// namespace. Its config changes nothing outside the namespace: every conntrack setting that would
// write a global sysctl (nf_conntrack_max, the TCP timeouts) is 0, "leave it as it is"
// (cmd/kube-proxy/app/conntrack.go and server_linux.go setupConntrack).

export const APISERVER = join(REPO_ROOT, "dist/test/standins/apiserver.js");
export const NODE_NAME = "proxyscope-node";
export const METRICS = "127.0.0.1:10249";
export const HEALTH = "127.0.0.1:10256";

/** The cached binary for `version`, or null when test/kube-proxy/build.mjs has not built it. */
export function realKubeProxy(version: string): string | null {
  const r = spawnSync(process.execPath, [join(REPO_ROOT, "test/kube-proxy/build.mjs"), "--path", version], {
    encoding: "utf8",
  });
  const bin = r.stdout.trim();
  return r.status === 0 && existsSync(bin) ? bin : null;
}

export interface RealKubeProxy {
  /** kube-proxy's stderr so far (for failure messages). */
  log(): string;
  stop(): Promise<void>;
}

/** GET inside the namespace (curl: the test process is not in it); null when nothing answered. */
export function getIn(ns: NetNs, url: string): { status: number; body: string } | null {
  const r = ns.exec(["curl", "-sS", "--max-time", "30", "-w", "\n%{http_code}", url]);
  if (r.code !== 0) return null;
  const i = r.stdout.lastIndexOf("\n");
  return { status: Number(r.stdout.slice(i + 1)), body: r.stdout.slice(0, i) };
}

/** A kubeconfig for the API server stand-in on 127.0.0.1:`port` (anonymous, plain http). */
export function standinKubeconfig(port: number): object {
  return {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "standin", cluster: { server: `http://127.0.0.1:${port}` } }],
    users: [{ name: "kube-proxy", user: {} }],
    contexts: [{ name: "standin", context: { cluster: "standin", user: "kube-proxy" } }],
    "current-context": "standin",
  };
}

/** kube-proxy's config file: JSON to the stand-in, metrics and health on loopback, conntrack left as it is. */
export function kubeProxyConfig(
  mode: "nftables" | "iptables" | "ipvs",
  kubeconfig: string,
  extraConfig: object = {},
): object {
  return {
    apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
    kind: "KubeProxyConfiguration",
    mode,
    hostnameOverride: NODE_NAME,
    metricsBindAddress: METRICS,
    healthzBindAddress: HEALTH,
    clientConnection: {
      kubeconfig,
      contentType: "application/json",
      acceptContentTypes: "application/json",
    },
    clusterCIDR: "10.244.0.0/16,fd00:244::/56",
    conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: "0s", tcpCloseWaitTimeout: "0s" },
    ...extraConfig,
  };
}

/**
 * Starts the stand-in API server with `cluster` and kube-proxy `bin` in `mode`, and resolves once
 * kube-proxy has synced its rules once: its own signal, kubeproxy_sync_proxy_rules_last_timestamp_seconds
 * above 0 on /metrics. Polled until kube-proxy exits (a named failure with its log) or `patienceMs`, a
 * margin wide enough that only a kube-proxy that cannot sync misses it.
 */
export async function startRealKubeProxy(
  ns: NetNs,
  bin: string,
  mode: "nftables" | "iptables" | "ipvs",
  cluster: object,
  extraConfig: object = {},
  patienceMs = 180_000,
): Promise<RealKubeProxy> {
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-realkp-"));
  const children: ChildProcess[] = [];
  let log = "";
  const stop = async () => {
    for (const c of children.reverse()) await stopOwned(c);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // Anonymous: client-go sends no token to an http:// server (see the stand-in's `token`).
    writeFileSync(
      join(dir, "cluster.json"),
      JSON.stringify({ token: null, listen: "127.0.0.1:0", ...cluster }),
    );
    const api = spawnOwned(
      "ip",
      ["netns", "exec", ns.name, process.execPath, APISERVER, join(dir, "cluster.json")],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    children.push(api);
    api.stderr?.on("data", (d: Buffer) => (log += `apiserver: ${d.toString()}`));
    const port = await new Promise<number>((resolve, reject) => {
      let out = "";
      api.stdout?.on("data", (d: Buffer) => {
        out += d.toString();
        const m = /ready (\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      api.once("exit", (code) => reject(new Error(`API server stand-in exited ${code}: ${log}`)));
    });
    writeFileSync(join(dir, "kubeconfig"), JSON.stringify(standinKubeconfig(port)));
    writeFileSync(
      join(dir, "config.json"),
      JSON.stringify(kubeProxyConfig(mode, join(dir, "kubeconfig"), extraConfig)),
    );
    const kp = spawnOwned(
      "ip",
      [
        "netns",
        "exec",
        ns.name,
        bin,
        `--config=${join(dir, "config.json")}`,
        `--hostname-override=${NODE_NAME}`,
        "-v=2",
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    children.push(kp);
    kp.stderr?.on("data", (d: Buffer) => (log = (log + d.toString()).slice(-200_000)));
    const exited = new Promise<never>((_, reject) =>
      kp.once("exit", (code, sig) =>
        reject(new Error(`kube-proxy exited ${code ?? sig} before its first sync:\n${log.slice(-4000)}`)),
      ),
    );
    exited.catch(() => {});
    const end = Date.now() + patienceMs;
    for (;;) {
      const m = getIn(ns, `http://${METRICS}/metrics`);
      const ts = /^kubeproxy_sync_proxy_rules_last_timestamp_seconds(?:\{[^}]*\})? (\S+)$/m.exec(
        m?.body ?? "",
      );
      if (ts && Number(ts[1]) > 0) break;
      if (kp.exitCode !== null || kp.signalCode !== null) await exited;
      if (Date.now() > end)
        throw new Error(`kube-proxy did not sync in ${patienceMs / 1000}s:\n${log.slice(-4000)}`);
      await Promise.race([sleep(500), exited]);
    }
    return { log: () => log, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
