// sysctl.d(5) configuration, as systemd-sysctl (and procps `sysctl --system`) apply it at boot.
//
// Files: every *.conf in /etc/sysctl.d, /run/sysctl.d, /usr/local/lib/sysctl.d, /usr/lib/sysctl.d (and
// /lib/sysctl.d where /usr is split), sorted by file name alone across the directories; of files with the
// same name only the one in the first directory of that list is read, so /etc overrides a vendor file
// and an /etc file linked to /dev/null masks it. /etc/sysctl.conf comes last where procps `sysctl --system`
// applies the files at boot; systemd-sysctl never reads it itself, only through a sysctl.d link to it
// (Debian 12, Ubuntu, Fedora ship /etc/sysctl.d/99-sysctl.conf; Debian 13 none): the probe decides which.
// Within the order the last assignment of a key wins.
//
// Lines: "key = value"; blank lines and lines starting with '#' or ';' are comments; a '-' before the
// key only silences errors; '/' may separate the key's parts instead of '.'; a key may be a glob
// (systemd 247+) and '!' before a glob excludes what it matches. A line that is no assignment is ignored
// by systemd-sysctl ("Line is not an assignment, ignoring"), and so here.

/** Directories in their override order: a file name in an earlier one hides the same name in later ones. */
export const SYSCTL_D_DIRS = [
  "/etc/sysctl.d",
  "/run/sysctl.d",
  "/usr/local/lib/sysctl.d",
  "/usr/lib/sysctl.d",
  "/lib/sysctl.d",
] as const;

/** Read after every sysctl.d file (procps `sysctl --system`). */
export const SYSCTL_CONF = "/etc/sysctl.conf";

interface SysctlAssignment {
  /** As written, normalised to '.' separators ("net.ipv4.ip_forward", or a glob "net.ipv4.conf.*.forwarding"). */
  key: string;
  value: string;
  /** A '!key' line: excludes the keys its glob matches from later globs; sets nothing. */
  exclude: boolean;
  line: number;
}

/** Normalises a key as sysctl(8) does: with '/' separators, '.' and '/' swap. */
function normaliseKey(k: string): string {
  const first = k.search(/[./]/);
  if (first < 0 || k[first] === ".") return k;
  return k.replace(/[./]/g, (c) => (c === "/" ? "." : "/"));
}

/** Every assignment in one file's text, in order. Never throws: what is no assignment is skipped. */
export function parseSysctlConf(text: string): SysctlAssignment[] {
  const out: SysctlAssignment[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.trim();
    if (raw === "" || raw.startsWith("#") || raw.startsWith(";")) continue;
    const eq = raw.indexOf("=");
    if (eq < 0) {
      // "!glob" alone is a valid exclusion in systemd-sysctl.
      if (raw.startsWith("!")) {
        out.push({ key: normaliseKey(raw.slice(1).trim()), value: "", exclude: true, line: i + 1 });
      }
      continue;
    }
    let key = raw.slice(0, eq).trim();
    const value = raw.slice(eq + 1).trim();
    if (key.startsWith("-")) key = key.slice(1).trim();
    const exclude = key.startsWith("!");
    if (exclude) key = key.slice(1).trim();
    if (key === "") continue;
    out.push({ key: normaliseKey(key), value, exclude, line: i + 1 });
  }
  return out;
}

/** fnmatch(3)-style match of '*', '?' and '[...]' as systemd-sysctl uses for glob keys. */
export function keyMatches(pattern: string, key: string): boolean {
  if (!/[*?[]/.test(pattern)) return pattern === key;
  let re = "^";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*") re += ".*";
    else if (c === "?") re += ".";
    else if (c === "[") {
      const end = pattern.indexOf("]", i + 2);
      if (end < 0) re += "\\[";
      else {
        const body = pattern.slice(i + 1, end).replace(/\\/g, "\\\\");
        re += `[${body.startsWith("!") ? `^${body.slice(1)}` : body}]`;
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\\]]/g, "\\$&");
  }
  try {
    return new RegExp(`${re}$`).test(key);
  } catch {
    return false;
  }
}

/** One file in the order systemd-sysctl reads them, with its assignments. */
export interface OrderedSysctlFile {
  path: string;
  assignments: SysctlAssignment[];
}

/** The value `keys` (one kernel knob under several names) is left with at boot, and where it comes from. */
interface PersistentSetting {
  value: string;
  path: string;
  key: string;
  line: number;
}

/**
 * The last assignment to any of `keys` across the files, in order; null when none assigns them. Several
 * keys: names of one knob (net.ipv4.ip_forward and net.ipv4.conf.all.forwarding write the same setting),
 * so the last write of either is what the kernel keeps.
 */
export function persistentSetting(
  files: readonly OrderedSysctlFile[],
  keys: readonly string[],
): PersistentSetting | null {
  // A '!' exclusion keeps globs off a key wherever it stands; an exact assignment still applies.
  const excluded = new Set(
    files.flatMap((f) =>
      f.assignments.filter((a) => a.exclude).flatMap((a) => keys.filter((k) => keyMatches(a.key, k))),
    ),
  );
  let last: PersistentSetting | null = null;
  for (const f of files) {
    for (const a of f.assignments) {
      if (a.exclude) continue;
      const hits = keys.filter((k) => keyMatches(a.key, k));
      if (hits.length === 0) continue;
      const glob = !keys.includes(a.key);
      if (glob && hits.every((k) => excluded.has(k))) continue;
      last = { value: a.value, path: f.path, key: a.key, line: a.line };
    }
  }
  return last;
}

/** The order of the sysctl.d files: by name; of equal names the first directory's. */
export function orderSysctlFiles(byDir: ReadonlyMap<string, readonly string[]>): string[] {
  const chosen = new Map<string, string>();
  for (const dir of SYSCTL_D_DIRS) {
    for (const name of byDir.get(dir) ?? []) {
      if (!name.endsWith(".conf") || chosen.has(name)) continue;
      chosen.set(name, `${dir}/${name}`);
    }
  }
  return [...chosen.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map((n) => chosen.get(n)!);
}
