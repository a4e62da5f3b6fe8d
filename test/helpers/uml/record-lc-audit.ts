// Re-records test/fixtures/ipvs/lc-audit in a UML guest (see the README there). From the repository root:
//   node --import @tapjs/typescript/import test/helpers/uml/record-lc-audit.ts
import { join } from "node:path";
import { REPO_ROOT } from "../uml.js";
import { recordInGuest } from "./record.js";

await recordInGuest({
  script: `sh test/helpers/uml/record-lc-audit.sh '${join(REPO_ROOT, "test/fixtures/ipvs/lc-audit")}'\n`,
  timeoutMs: 180_000,
  memMb: 768,
});
