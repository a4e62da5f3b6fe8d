import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./uml.js";

/**
 * Tests that run the built agent (inside namespaces or UML) need dist/ current. `npm test` builds
 * first; tests never build themselves, because a tsc writing dist/ races the tests reading it.
 * Returns a reason when a compiled file is missing or older than its source, else null.
 */
export function staleBuild(sources: readonly string[]): string | null {
  for (const s of sources) {
    const out = join(REPO_ROOT, "dist", s.replace(/\.ts$/, ".js"));
    if (!existsSync(out)) return `${out} is missing: run npm run build`;
    if (statSync(out).mtimeMs < statSync(join(REPO_ROOT, s)).mtimeMs)
      return `${out} is older than ${s}: run npm run build`;
  }
  return null;
}
