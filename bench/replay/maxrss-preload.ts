// Preloaded into the agent's CLI (`node --import .../maxrss-preload.js agent/cli.js scan`): the process's
// own peak RSS (getrusage RUSAGE_SELF), appended in MB to $PXBENCH_MAXRSS_OUT at exit. GNU time's %M is
// the largest of every process it waited for, which in nftables mode is `nft`, not the agent.
import { appendFileSync } from "node:fs";
import { isMainThread } from "node:worker_threads";

const out = process.env.PXBENCH_MAXRSS_OUT;
if (isMainThread && out) {
  process.on("exit", () => appendFileSync(out, `${process.resourceUsage().maxRSS / 1024}\n`));
}
