// Re-records test/fixtures/ipvs in a UML guest (see the README there). Run from the repository root:
//   node --import @tapjs/typescript/import test/helpers/uml/record-ipvs-fixtures.ts
import { join } from "node:path";
import { MODULE_GROUPS, REPO_ROOT } from "../uml.js";
import { recordInGuest } from "./record.js";

const out = join(REPO_ROOT, "test/fixtures/ipvs");
// Boot without IPVS and ip_set (xt_ipvs would pull ip_vs in) so the "not loaded" answers can be
// recorded first; the guest script loads them afterwards.
const bootModules = [...MODULE_GROUPS.net, ...MODULE_GROUPS.iptables].filter((m) => m !== "xt_ipvs");
const later = [...MODULE_GROUPS.ipvs, ...MODULE_GROUPS.ipset];

await recordInGuest({
  script: `sh test/helpers/uml/record-ipvs.sh '${out}' ${later.join(" ")}\n`,
  modules: bootModules,
  timeoutMs: 300_000,
});
