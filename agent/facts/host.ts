import { z } from "zod";

export const KernelFacts = z.object({
  /** As the kernel reports it, e.g. "6.8.0-51-generic". */
  release: z.string(),
  major: z.number().int(),
  minor: z.number().int(),
  patch: z.number().int(),
});
export type KernelFacts = z.infer<typeof KernelFacts>;

export const OsReleaseFacts = z.object({
  /** Which file answered, relative to the host root ("/etc/os-release" or "/usr/lib/os-release"). */
  source: z.string(),
  id: z.string().nullable(),
  idLike: z.array(z.string()),
  versionId: z.string().nullable(),
  versionCodename: z.string().nullable(),
  prettyName: z.string().nullable(),
});
export type OsReleaseFacts = z.infer<typeof OsReleaseFacts>;

export const NftVersionFacts = z.object({
  /** "1.0.6", or null when no source could tell. */
  version: z.string().nullable(),
  /** How it was found: the host's package database, or running nft (bare-metal scans only). */
  source: z.enum(["dpkg", "apk", "rpm-header", "exec", "none"]),
  detail: z.string().optional(),
  /**
   * false: no package database lists nftables and there is no nft binary under the host root
   * (Bottlerocket ships none, bottlerocket-os/bottlerocket#4548) — "not installed", never "old" or "newer".
   * Absent otherwise: a version was found, or nobody could tell (an older agent, an unreadable RPM db).
   */
  installed: z.boolean().optional(),
});
export type NftVersionFacts = z.infer<typeof NftVersionFacts>;

const ModuleState = z.enum(["loaded", "builtin", "available", "absent"]);
export const KernelModulesFacts = z.object({
  /** nftables mode's modules, each as the kernel has it. */
  modules: z.array(z.object({ name: z.string(), state: ModuleState })),
  /** Whether modules.builtin/modules.dep under the host root could be read (else "absent" may mean "unknown"). */
  moduleTreeReadable: z.boolean(),
});
export type KernelModulesFacts = z.infer<typeof KernelModulesFacts>;

export const SysctlFacts = z.object({
  values: z.array(
    z.object({
      name: z.string(),
      /** Trimmed text of the /proc/sys file; null when the file does not exist (module not loaded). */
      value: z.string().nullable(),
    }),
  ),
});
export type SysctlFacts = z.infer<typeof SysctlFacts>;

/** One sysctl's value as read; null when the probe did not read it or the file does not exist. */
export function sysctlValue(s: SysctlFacts | null | undefined, name: string): string | null {
  return s?.values.find((v) => v.name === name)?.value ?? null;
}

export const AddressFamily = z.enum(["inet", "inet6"]);
export const InterfaceAddress = z.object({
  family: AddressFamily,
  address: z.string(),
  prefixLen: z.number().int(),
  scope: z.string(),
});
export type InterfaceAddress = z.infer<typeof InterfaceAddress>;

export const AddressesFacts = z.object({
  interfaces: z.array(
    z.object({
      name: z.string(),
      /** Link kind from `ip -d` (dummy, veth, vxlan, ...) or null for a plain device. */
      kind: z.string().nullable(),
      operState: z.string(),
      addresses: z.array(InterfaceAddress),
    }),
  ),
  /** The node's primary addresses: what nftables mode's `nodePortAddresses: primary` keeps. */
  primary: z.object({
    ipv4: z.string().nullable(),
    ipv6: z.string().nullable(),
    source: z.enum(["config", "default-route", "none"]),
  }),
});
export type AddressesFacts = z.infer<typeof AddressesFacts>;
