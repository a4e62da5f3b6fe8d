// Re-records test/fixtures/ipvs/conn in a UML guest (see the README there). Run from the repository root:
//   node --import @tapjs/typescript/import test/helpers/uml/record-ipvs-conn.ts
import { join } from "node:path";
import { bootUml, MODULE_GROUPS, REPO_ROOT } from "../uml.js";

const out = join(REPO_ROOT, "test/fixtures/ipvs");
const r = await bootUml({
  script: `sh test/helpers/uml/record-ipvs-conn.sh '${out}' ${MODULE_GROUPS.ipvs.join(" ")}\n`,
  modules: [...MODULE_GROUPS.net],
  timeoutMs: 900_000,
});
process.stdout.write(r.output);
if (r.modulesFailed.length > 0) console.error(`modules that did not load: ${r.modulesFailed.join(", ")}`);
console.error(`guest exit status ${r.exitCode} after ${Math.round(r.durationMs)} ms`);
process.exitCode = r.exitCode;
