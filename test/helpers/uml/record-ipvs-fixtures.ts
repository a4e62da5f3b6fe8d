// Re-records test/fixtures/ipvs in a UML guest (see the README there). Run from the repository root:
//   node --import @tapjs/typescript/import test/helpers/uml/record-ipvs-fixtures.ts
import { join } from "node:path";
import { bootUml, MODULE_GROUPS, REPO_ROOT } from "../uml.js";

const out = join(REPO_ROOT, "test/fixtures/ipvs");
// Boot without IPVS and ip_set (xt_ipvs would pull ip_vs in) so the "not loaded" answers can be
// recorded first; the guest script loads them afterwards.
const bootModules = [...MODULE_GROUPS.net, ...MODULE_GROUPS.iptables].filter((m) => m !== "xt_ipvs");
const later = [...MODULE_GROUPS.ipvs, ...MODULE_GROUPS.ipset];

const r = await bootUml({
  script: `sh test/helpers/uml/record-ipvs.sh '${out}' ${later.join(" ")}\n`,
  modules: bootModules,
  timeoutMs: 300_000,
});
process.stdout.write(r.output);
if (r.modulesFailed.length > 0) console.error(`modules that did not load: ${r.modulesFailed.join(", ")}`);
console.error(`guest exit status ${r.exitCode} after ${Math.round(r.durationMs)} ms`);
process.exitCode = r.exitCode;
