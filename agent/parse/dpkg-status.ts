import { parseStanzas } from "./debian-control.js";
import { parsed, unparsable } from "./result.js";
import type { Result } from "../../common/result.js";

export interface InstalledPackage {
  name: string;
  /** The Debian version string as dpkg records it, e.g. "1.0.6-2+deb12u2" or "1:2.3-1". */
  version: string;
}

/** Finds an installed package in /var/lib/dpkg/status; `null` when it is absent or not installed. */
export function findDpkgPackage(text: string, name: string): Result<InstalledPackage | null> {
  const r = parseStanzas(text);
  if (!r.ok) return r;
  if (r.value.length > 0 && !r.value.some((s) => s.has("Package"))) {
    return unparsable("no stanza has a Package field: not a dpkg status file");
  }
  for (const s of r.value) {
    if (s.get("Package") !== name) continue;
    // Status is "want flag state"; only "installed" means the files are on disk (not config-files).
    const state = (s.get("Status") ?? "").split(/\s+/)[2];
    if (state !== "installed") continue;
    const version = s.get("Version");
    if (!version) return unparsable(`package ${name} is installed but has no Version field`);
    return parsed({ name, version });
  }
  return parsed(null);
}
