import type { Probe } from "./types.js";
import { addressesProbe } from "./addresses.js";
import { kernelModulesProbe } from "./kernel-modules.js";
import { kernelProbe } from "./kernel.js";
import { nftVersionProbe } from "./nft-version.js";
import { osReleaseProbe } from "./os-release.js";
import { sysctlsProbe } from "./sysctls.js";

// Every probe, registered in one place (node_exporter's collector registry, in miniature).
export const PROBES: readonly Probe<unknown>[] = [
  kernelProbe,
  osReleaseProbe,
  nftVersionProbe,
  kernelModulesProbe,
  sysctlsProbe,
  addressesProbe,
] as Probe<unknown>[];
