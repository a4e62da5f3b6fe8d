import type { HttpResult } from "../../common/http.js";
import type { ToolRunner } from "../io/run.js";
import { ipvsGateKey, type GateInput, type GateKey } from "../parse/ipvs-gate.js";
import { parseProxyMode } from "../parse/kube-proxy-mode.js";
import { ipSetInKernel } from "./ipsets.js";
import { KUBE_PROXY_METRICS_MAX_BYTES, kubeProxyGet, PROXY_MODE_MAX_BYTES } from "./kube-proxy-get.js";
import type { ScanShared } from "./scan-cache.js";

/** What the gate's cheap reads need: the scan's input, in part. */
interface IpvsGateInput {
  sysRoot: string;
  tools: ToolRunner;
  kubeProxyMetricsUrl: string;
  callTimeoutMs: number;
}

const IPSET_MAX_BYTES = 16 * 1024 * 1024;
// `ip addr show up` leaves kube-ipvs0 (never set up) out: a few links' addresses.
const LINKS_MAX_BYTES = 4 * 1024 * 1024;

/**
 * The ipvs-mode gate's key for one scan: /proxyMode first, and only when it says ipvs the rest (so
 * an nftables-mode node pays one small GET a scan for it). `ipset list -terse` only when ip_set is in
 * the kernel (listing would load it); its answer goes to `shared` for the ipsets probe to use.
 */
export async function readIpvsGateKey(input: IpvsGateInput, shared: ScanShared): Promise<GateKey> {
  const get = (path: string, maxBytes: number) => {
    const url = `${input.kubeProxyMetricsUrl}${path}`;
    return answer(url, kubeProxyGet(shared, url, { timeoutMs: input.callTimeoutMs, maxBytes }));
  };
  const mode = await get("/proxyMode", PROXY_MODE_MAX_BYTES);
  let proxyMode: GateInput<string> = mode;
  if (mode.ok) {
    const p = parseProxyMode(mode.value);
    proxyMode = p.ok ? { ok: true, value: p.value.mode } : { ok: false, why: p.error };
  }
  if (!proxyMode.ok || proxyMode.value !== "ipvs")
    return ipvsGateKey({ proxyMode, metrics: none, ipsets: none, links: none });
  const [metrics, ipsets, links] = await Promise.all([
    get("/metrics", KUBE_PROXY_METRICS_MAX_BYTES),
    readIpsetHeaders(input),
    tool(input, "ip", ["-j", "addr", "show", "up"], LINKS_MAX_BYTES),
  ]);
  if (ipsets.ok) shared.ipsetTerse = ipsets.value;
  return ipvsGateKey({ proxyMode, metrics, ipsets, links });
}

const none: GateInput<never> = { ok: false, why: "not read" };

async function readIpsetHeaders(input: IpvsGateInput): Promise<GateInput<string | null>> {
  if ((await ipSetInKernel(input.sysRoot)) === false) return { ok: true, value: null };
  return tool(input, "ipset", ["list", "-terse"], IPSET_MAX_BYTES);
}

async function answer(url: string, get: Promise<HttpResult>): Promise<GateInput<string>> {
  const r = await get;
  if (!r.ok) return { ok: false, why: `${r.error.kind}: ${r.error.message}` };
  if (r.status !== 200) return { ok: false, why: `${url} answered ${r.status}` };
  return { ok: true, value: r.body };
}

async function tool(
  input: IpvsGateInput,
  name: "ip" | "ipset",
  args: readonly string[],
  maxBytes: number,
): Promise<GateInput<string>> {
  const r = await input.tools.run(name, args, { timeoutMs: input.callTimeoutMs, maxBytes });
  return r.ok ? { ok: true, value: r.stdout } : { ok: false, why: `${r.error.kind}: ${r.error.message}` };
}
