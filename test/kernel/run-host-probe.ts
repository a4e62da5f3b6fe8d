// Runs one host probe in this process's namespaces and prints its outcome as JSON: the kernel test
// starts it under `ip netns exec` / `unshare -m`, since sysctls and addresses are per namespace.
import { ToolRunner } from "../../agent/io/run.js";
import { addressesProbe } from "../../agent/probes/addresses.js";
import { nftVersionProbe } from "../../agent/probes/nft-version.js";
import { sysctlsProbe } from "../../agent/probes/sysctls.js";

const probes = { sysctls: sysctlsProbe, addresses: addressesProbe, "nft-version": nftVersionProbe };
const name = process.argv[2] as keyof typeof probes;
const outcome = await probes[name].run({
  hostRoot: "/",
  procRoot: "/proc",
  sysRoot: "/sys",
  tools: new ToolRunner(),
  kubeProxyMetricsUrl: "http://127.0.0.1:10249",
  kubeProxyHealthUrl: "http://127.0.0.1:10256",
  nodeIPs: [],
  callTimeoutMs: 10000,
  prior: {},
});
process.stdout.write(JSON.stringify(outcome));
