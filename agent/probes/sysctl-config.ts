import type { SysctlConfigFacts, SysctlConfigFile } from "../facts/sysctl-config.js";
import { listHostDir, readHostFile, resolveHostPath } from "../io/host-config-files.js";
import {
  orderSysctlFiles,
  parseSysctlConf,
  persistentSetting,
  SYSCTL_CONF,
  SYSCTL_D_DIRS,
  type OrderedSysctlFile,
} from "../parse/sysctl-conf.js";
import { defineProbe } from "./types.js";

/**
 * The settings whose persistence the migration changes: kube-proxy's ipvs mode sets ip_forward=1 on
 * every start (pkg/proxy/ipvs/proxier.go NewProxier, sysctlForward), nftables mode sets no sysctl
 * (pkg/proxy/nftables/proxier.go NewProxier takes no sysctl interface). Writing either name writes the
 * one IPv4 forwarding switch, so the last write of either in boot order is what a reboot leaves.
 */
const PERSISTENT_SYSCTLS = [
  { name: "net.ipv4.ip_forward", keys: ["net.ipv4.ip_forward", "net.ipv4.conf.all.forwarding"] },
] as const;

// A sysctl.d file is a few hundred bytes; this only bounds something that is not one.
const MAX_FILE_BYTES = 256 * 1024;

// systemd-sysctl, which applies sysctl.d(5) at boot on a systemd host, at its path with merged or split /usr.
const SYSTEMD_SYSCTL = ["/usr/lib/systemd/systemd-sysctl", "/lib/systemd/systemd-sysctl"];

/** Whether systemd-sysctl is on the host; a path that could not be looked at is unread, never "absent". */
async function bootAppliesWithSystemd(hostRoot: string, unread: SysctlConfigFile[]): Promise<boolean> {
  for (const p of SYSTEMD_SYSCTL) {
    const r = await resolveHostPath(hostRoot, p);
    if (r.ok) return true;
    if (!r.missing) unread.push({ read: false, path: p, why: r.error });
  }
  return false;
}

// Reads the host's persistent sysctl configuration (sysctl.d(5), boot order in parse/sysctl-conf.ts).
// Nothing is written and no program runs: `sysctl --system` would apply the files.
export const sysctlConfigProbe = defineProbe("sysctl-config", {
  async run(ctx) {
    // systemd-sysctl reads the sysctl.d directories only: /etc/sysctl.conf counts where a sysctl.d entry
    // links it in (Debian 12, Ubuntu, Fedora: 99-sysctl.conf), at that entry's place, and nowhere else (Debian
    // 13 ships no link). Without systemd, procps `sysctl --system` reads it after every directory.
    const files: SysctlConfigFile[] = [];
    const systemd = await bootAppliesWithSystemd(ctx.hostRoot, files);
    const byDir = new Map<string, string[]>();
    for (const dir of SYSCTL_D_DIRS) {
      const l = await listHostDir(ctx.hostRoot, dir);
      // A directory that could not be listed hides whatever its files set: unread, never empty.
      if (!l.ok) files.push({ read: false, path: dir, why: l.error });
      else if (!l.missing) byDir.set(dir, l.names);
    }
    const ordered: OrderedSysctlFile[] = [];
    for (const path of [...orderSysctlFiles(byDir), ...(systemd ? [] : [SYSCTL_CONF])]) {
      const r = await readHostFile(ctx.hostRoot, path, MAX_FILE_BYTES);
      if (!r.ok) {
        // sysctl.conf is optional; a listed file that vanished since the listing is gone, not unread.
        if (!r.missing) files.push({ read: false, path, why: r.error });
        continue;
      }
      const assignments = parseSysctlConf(r.text);
      ordered.push({ path, assignments });
      files.push({ read: true, path, masked: r.masked, assignments: assignments.length });
    }
    const settings: SysctlConfigFacts["settings"] = PERSISTENT_SYSCTLS.map((s) => {
      const p = persistentSetting(ordered, s.keys);
      return {
        name: s.name,
        keys: [...s.keys],
        value: p?.value ?? null,
        source: p === null ? null : { path: p.path, line: p.line, key: p.key },
      };
    });
    return { ok: true, facts: { files, settings } };
  },
});
