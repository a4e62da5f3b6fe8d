// Runs one host probe in this process's namespaces and prints its outcome as JSON: the kernel test
// starts it under `ip netns exec` / `unshare -m`, since sysctls and addresses are per namespace.
import { ToolRunner } from "../../agent/io/run.js";
import { addressesProbe } from "../../agent/probes/addresses.js";
import { nftVersionProbe } from "../../agent/probes/nft-version.js";
import { sysctlsProbe } from "../../agent/probes/sysctls.js";

const probes = { sysctls: sysctlsProbe, addresses: addressesProbe, "nft-version": nftVersionProbe };
const name = process.argv[2] as keyof typeof probes;
const ctx = {
  hostRoot: "/",
  procRoot: "/proc",
  sysRoot: "/sys",
  tools: new ToolRunner(),
  callTimeoutMs: 10000,
  prior: {},
};
// No --node-ip: the addresses probe finds the primary addresses from the default routes.
const outcome = await (name === "addresses"
  ? addressesProbe.run(ctx, { nodeIPs: [] })
  : probes[name].run(ctx));
process.stdout.write(JSON.stringify(outcome));
