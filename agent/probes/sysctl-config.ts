import type { SysctlConfigFacts, SysctlConfigFile } from "../facts/sysctl-config.js";
import { listHostDir, readHostFile } from "../io/host-config-files.js";
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
export const PERSISTENT_SYSCTLS = [
  { name: "net.ipv4.ip_forward", keys: ["net.ipv4.ip_forward", "net.ipv4.conf.all.forwarding"] },
] as const;

// A sysctl.d file is a few hundred bytes; this only bounds something that is not one.
const MAX_FILE_BYTES = 256 * 1024;

// Reads the host's persistent sysctl configuration (sysctl.d(5), boot order in parse/sysctl-conf.ts).
// Nothing is written and no program runs: `sysctl --system` would apply the files.
export const sysctlConfigProbe = defineProbe("sysctl-config", {
  async run(ctx) {
    const byDir = new Map<string, string[]>();
    const files: SysctlConfigFile[] = [];
    for (const dir of SYSCTL_D_DIRS) {
      const l = await listHostDir(ctx.hostRoot, dir);
      // A directory that could not be listed hides whatever its files set: unread, never empty.
      if (!l.ok) files.push({ read: false, path: dir, why: l.error });
      else if (!l.missing) byDir.set(dir, l.names);
    }
    const ordered: OrderedSysctlFile[] = [];
    for (const path of [...orderSysctlFiles(byDir), SYSCTL_CONF]) {
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
