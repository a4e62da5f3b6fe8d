import type { Probe } from "./types.js";
import { kernelProbe } from "./kernel.js";

// Every probe, registered in one place (node_exporter's collector registry, in miniature).
export const PROBES: readonly Probe<unknown>[] = [kernelProbe] as Probe<unknown>[];
