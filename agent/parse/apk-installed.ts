import { parseStanzas } from "./debian-control.js";
import type { InstalledPackage } from "./dpkg-status.js";
import { parsed, unparsable } from "./result.js";
import type { Result } from "../../common/result.js";

/** Finds a package in Alpine's /lib/apk/db/installed (`P:name`, `V:version` lines); `null` when absent. */
export function findApkPackage(text: string, name: string): Result<InstalledPackage | null> {
  const r = parseStanzas(text);
  if (!r.ok) return r;
  if (r.value.length > 0 && !r.value.some((s) => s.has("P"))) {
    return unparsable("no stanza has a P: field: not an apk installed database");
  }
  for (const s of r.value) {
    if (s.get("P") !== name) continue;
    const version = s.get("V");
    if (!version) return unparsable(`package ${name} has no V: field`);
    return parsed({ name, version });
  }
  return parsed(null);
}
