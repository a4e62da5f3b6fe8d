// Re-records test/fixtures/ipvs/stats in a UML guest (see the README there). Run from the repository root:
//   node --import @tapjs/typescript/import test/helpers/uml/record-ipvs-stats.ts
import { join } from "node:path";
import { MODULE_GROUPS, REPO_ROOT } from "../uml.js";
import { recordInGuest } from "./record.js";

const out = join(REPO_ROOT, "test/fixtures/ipvs");
await recordInGuest({
  script: `sh test/helpers/uml/record-ipvs-stats.sh '${out}' ${MODULE_GROUPS.ipvs.join(" ")}\n`,
  modules: [...MODULE_GROUPS.net],
  timeoutMs: 900_000,
});
