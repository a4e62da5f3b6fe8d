import { excerpt, parsed, unparsable } from "./result.js";
import type { Result } from "../../common/result.js";

// The kernel treats "-" and "_" in module names as the same character; compare in one spelling.
const normalizeModuleName = (name: string): string => name.replace(/-/g, "_");

/** Module names from /proc/modules ("nf_tables 303104 12 nft_ct,nft_nat, Live 0x0000000000000000"). */
export function parseProcModules(text: string): Result<Set<string>> {
  const names = new Set<string>();
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    if (line.trim() === "") continue;
    const fields = line.trim().split(/\s+/);
    if (fields.length < 3 || !/^[\w-]+$/.test(fields[0] ?? "") || !/^\d+$/.test(fields[1] ?? "")) {
      return unparsable(`/proc/modules line ${i + 1} is not "name size refcount ...": ${excerpt(line)}`);
    }
    names.add(normalizeModuleName(fields[0] ?? ""));
  }
  return parsed(names);
}

const KO_PATH = /^(?:\S*\/)?([\w-]+)\.ko(?:\.(?:xz|gz|zst))?$/;

/** Module names from modules.builtin ("kernel/net/netfilter/nf_tables.ko", one per line). */
export function parseModulesBuiltin(text: string): Result<Set<string>> {
  return modulePaths(text, "modules.builtin", (line) => line.trim());
}

/** Module names from modules.dep ("kernel/net/netfilter/nft_ct.ko.zst: kernel/net/netfilter/nf_tables.ko.zst"). */
export function parseModulesDep(text: string): Result<Set<string>> {
  return modulePaths(text, "modules.dep", (line) => {
    const colon = line.indexOf(":");
    return colon < 0 ? "" : line.slice(0, colon).trim();
  });
}

function modulePaths(text: string, file: string, pathOf: (line: string) => string): Result<Set<string>> {
  if (text.includes("\u0000")) return unparsable(`${file} contains NUL bytes`);
  const names = new Set<string>();
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    if (line.trim() === "") continue;
    const m = KO_PATH.exec(pathOf(line));
    if (!m?.[1]) return unparsable(`${file} line ${i + 1} names no .ko file: ${excerpt(line)}`);
    names.add(normalizeModuleName(m[1]));
  }
  return parsed(names);
}
