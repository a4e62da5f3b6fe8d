import type { ConfigzFacts } from "../facts/kube-proxy.js";
import { excerpt, parsed, unparsable } from "./result.js";
import type { Result } from "../../common/result.js";

/*
 * /configz is component-base's configz handler: json.Marshal(map[name]*Config) with the name
 * "kubeproxy.config.k8s.io" (kubeproxyconfig.GroupName, cmd/kube-proxy/app/server.go newProxyServer).
 * What sits under it depends on the release:
 * - up to v1.35 kube-proxy registers its INTERNAL config (pkg/proxy/apis/config/types.go), whose
 *   fields have no json tags, so the keys are Go field names: "Mode", "IPVS", "NodePortAddresses",
 *   "FeatureGates", "Linux":{"Conntrack":{"TCPBeLiberal"}} (older internal layouts: top-level
 *   "Conntrack" and "ClusterCIDR"). No kind/apiVersion.
 * - PR #136044 (v1.36) made configz.Set demand an external version; its release note says kube-proxy
 *   now serves the public type: v1alpha1 json keys (staging/src/k8s.io/kube-proxy/config/v1alpha1/
 *   types.go) with "kind"/"apiVersion". Issue #137426 was still open about it, so both are accepted.
 * Durations are metav1.Duration, which marshals as a Go duration string ("0s", "15m0s"), never
 * nanoseconds. "0s" for an ipvs timeout means "leave the kernel's value", reported as null.
 * There is no nftables table-name field in any KubeProxyConfiguration read (the nftables proxier and
 * its metrics collector hard-code table "kube-proxy"), so nftablesTableName is null unless a future
 * config carries nftables.tableName.
 */
const CONFIGZ_KEY = "kubeproxy.config.k8s.io";

type Obj = Record<string, unknown>;

export function parseConfigz(body: string): Result<ConfigzFacts> {
  let root: unknown;
  try {
    root = JSON.parse(body);
  } catch {
    return unparsable(`/configz is not JSON: ${excerpt(body)}`);
  }
  if (!isObj(root)) return unparsable(`/configz is not a JSON object: ${excerpt(body)}`);
  if (!(CONFIGZ_KEY in root)) return unparsable(`/configz has no ${CONFIGZ_KEY} entry: ${excerpt(body)}`);
  const c = root[CONFIGZ_KEY];
  if (!isObj(c)) return unparsable(`/configz ${CONFIGZ_KEY} is ${c === null ? "null" : "not an object"}`);
  const internal = "Mode" in c || "IPVS" in c;
  const k = internal ? INTERNAL : VERSIONED;

  const mode = c[k.mode];
  if (typeof mode !== "string") return unparsable(`/configz has no string ${k.mode}`);
  const ipvsRaw = c[k.ipvs] ?? {};
  if (!isObj(ipvsRaw)) return unparsable(`/configz ${k.ipvs} is not an object`);

  const errors: string[] = [];
  const strings = (v: unknown, what: string): string[] => {
    if (v === undefined || v === null) return [];
    if (Array.isArray(v) && v.every((x) => typeof x === "string")) return v as string[];
    errors.push(`${what} is not a list of strings`);
    return [];
  };
  const duration = (v: unknown, what: string): string | null => {
    if (v === undefined || v === null || v === "0s" || v === "") return null;
    if (typeof v === "string" && /^-?(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(v)) return v;
    errors.push(`${what} is not a Go duration: ${excerpt(JSON.stringify(v) ?? "")}`);
    return null;
  };
  const optString = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

  const gates = c[k.featureGates];
  const featureGates: Record<string, boolean> = {};
  if (gates !== undefined && gates !== null) {
    if (!isObj(gates) || !Object.values(gates).every((b) => typeof b === "boolean")) {
      errors.push(`${k.featureGates} is not a map of booleans`);
    } else Object.assign(featureGates, gates);
  }

  const facts: ConfigzFacts = {
    mode,
    nodePortAddresses: strings(c[k.nodePortAddresses], k.nodePortAddresses),
    featureGates,
    ipvs: {
      scheduler: typeof ipvsRaw[k.scheduler] === "string" ? (ipvsRaw[k.scheduler] as string) : "",
      strictARP: ipvsRaw[k.strictARP] === true,
      tcpTimeout: duration(ipvsRaw[k.tcpTimeout], "ipvs tcpTimeout"),
      tcpFinTimeout: duration(ipvsRaw[k.tcpFinTimeout], "ipvs tcpFinTimeout"),
      udpTimeout: duration(ipvsRaw[k.udpTimeout], "ipvs udpTimeout"),
      excludeCIDRs: strings(ipvsRaw[k.excludeCIDRs], "ipvs excludeCIDRs"),
    },
    nftablesTableName: optString(pick(c, [k.nftables, k.tableName])),
    conntrackTcpBeLiberal: boolOrNull(
      pick(c, ["Linux", "Conntrack", "TCPBeLiberal"]) ??
        pick(c, ["Conntrack", "TCPBeLiberal"]) ??
        pick(c, ["conntrack", "tcpBeLiberal"]),
    ),
    metricsBindAddress: optString(c[k.metricsBindAddress]),
    healthzBindAddress: optString(c[k.healthzBindAddress]),
    detectLocalMode: optString(c[k.detectLocalMode]),
    clusterCIDR: clusterCIDR(c),
  };
  if (errors.length > 0) return unparsable(`/configz: ${errors.join("; ")}`);
  return parsed(facts);
}

const INTERNAL = {
  mode: "Mode",
  ipvs: "IPVS",
  nodePortAddresses: "NodePortAddresses",
  featureGates: "FeatureGates",
  scheduler: "Scheduler",
  strictARP: "StrictARP",
  tcpTimeout: "TCPTimeout",
  tcpFinTimeout: "TCPFinTimeout",
  udpTimeout: "UDPTimeout",
  excludeCIDRs: "ExcludeCIDRs",
  nftables: "NFTables",
  tableName: "TableName",
  metricsBindAddress: "MetricsBindAddress",
  healthzBindAddress: "HealthzBindAddress",
  detectLocalMode: "DetectLocalMode",
};
const VERSIONED: typeof INTERNAL = {
  mode: "mode",
  ipvs: "ipvs",
  nodePortAddresses: "nodePortAddresses",
  featureGates: "featureGates",
  scheduler: "scheduler",
  strictARP: "strictARP",
  tcpTimeout: "tcpTimeout",
  tcpFinTimeout: "tcpFinTimeout",
  udpTimeout: "udpTimeout",
  excludeCIDRs: "excludeCIDRs",
  nftables: "nftables",
  tableName: "tableName",
  metricsBindAddress: "metricsBindAddress",
  healthzBindAddress: "healthzBindAddress",
  detectLocalMode: "detectLocalMode",
};

/** Internal v1.31+: DetectLocal.ClusterCIDRs (a list); older internal and v1alpha1: one comma-separated string. */
function clusterCIDR(c: Obj): string | null {
  const list = pick(c, ["DetectLocal", "ClusterCIDRs"]);
  if (Array.isArray(list) && list.length > 0 && list.every((x) => typeof x === "string"))
    return list.join(",");
  const s = c.ClusterCIDR ?? c.clusterCIDR;
  return typeof s === "string" && s !== "" ? s : null;
}

function pick(o: Obj, path: string[]): unknown {
  let cur: unknown = o;
  for (const p of path) {
    if (!isObj(cur)) return undefined;
    cur = cur[p];
  }
  return cur;
}

function boolOrNull(v: unknown): boolean | null {
  return typeof v === "boolean" ? v : null;
}

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
