import { writeFile } from "node:fs/promises";
import { join } from "node:path";

type SysctlWriteResult = { ok: true; path: string } | { ok: false; path: string; error: string };

/** "net.ipv4.conf.all.arp_ignore" -> "<procRoot>/sys/net/ipv4/conf/all/arp_ignore"; null for a name that could escape /proc/sys. */
function sysctlPath(procRoot: string, name: string): string | null {
  if (!/^[a-z0-9_]+(\.[a-z0-9_-]+)+$/i.test(name)) return null;
  return join(procRoot, "sys", ...name.split("."));
}

/** Writes one sysctl the way `sysctl -w` does (a write to its /proc/sys file); never throws. */
export async function writeSysctl(procRoot: string, name: string, value: string): Promise<SysctlWriteResult> {
  const path = sysctlPath(procRoot, name);
  if (path === null) return { ok: false, path: name, error: `not a sysctl name: ${JSON.stringify(name)}` };
  try {
    // No O_CREAT: a sysctl that does not exist is an error, never a new file.
    await writeFile(path, `${value}\n`, { flag: "r+" });
    return { ok: true, path };
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    return { ok: false, path, error: `${err.code ?? "error"}: ${err.message}` };
  }
}
