import { z } from "zod";
import { ProbeError } from "./probe-error.js";

/** One configuration file systemd-sysctl would read at boot, as found under the host root. */
export const SysctlConfigFile = z.discriminatedUnion("read", [
  z.object({
    read: z.literal(true),
    /** The path on the host ("/etc/sysctl.d/99-kubernetes.conf"). */
    path: z.string(),
    /** Linked to /dev/null: masks the vendor file of the same name; sets nothing. */
    masked: z.boolean(),
    assignments: z.number().int(),
  }),
  z.object({ read: z.literal(false), path: z.string(), why: ProbeError }),
]);
export type SysctlConfigFile = z.infer<typeof SysctlConfigFile>;

/** What the persistent configuration leaves one kernel setting at after a reboot. */
const PersistentSysctl = z.object({
  /** The setting, by its usual name ("net.ipv4.ip_forward"). */
  name: z.string(),
  /** The names that write it (net.ipv4.ip_forward and net.ipv4.conf.all.forwarding are one knob). */
  keys: z.array(z.string()),
  /** The value of the last assignment in boot order; null: no file assigns it (the kernel default stays). */
  value: z.string().nullable(),
  /** Where that assignment is: file, line and the key as written (a glob, perhaps). */
  source: z.object({ path: z.string(), line: z.number().int(), key: z.string() }).nullable(),
});
type PersistentSysctl = z.infer<typeof PersistentSysctl>;

/**
 * The persistent sysctl configuration (sysctl.d(5)): every file in boot order, and what it leaves the
 * settings the migration cares about at. A file or directory that could not be read is listed with
 * `read: false` and the probe fails over it (facts/unread.ts): its assignments are unknown, never "none".
 */
export const SysctlConfigFacts = z.object({
  files: z.array(SysctlConfigFile),
  settings: z.array(PersistentSysctl),
});
export type SysctlConfigFacts = z.infer<typeof SysctlConfigFacts>;
