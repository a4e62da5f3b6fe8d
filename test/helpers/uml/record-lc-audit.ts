// Re-records test/fixtures/ipvs/lc-audit in a UML guest (see the README there). From the repository root:
//   node --import @tapjs/typescript/import test/helpers/uml/record-lc-audit.ts
import { join } from "node:path";
import { bootUml, REPO_ROOT } from "../uml.js";

const r = await bootUml({
  script: `sh test/helpers/uml/record-lc-audit.sh '${join(REPO_ROOT, "test/fixtures/ipvs/lc-audit")}'\n`,
  timeoutMs: 180_000,
  memMb: 768,
});
process.stdout.write(r.output);
console.error(`guest exit status ${r.exitCode} after ${Math.round(r.durationMs)} ms`);
process.exitCode = r.exitCode;
