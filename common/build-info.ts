import { Gauge, type Registry } from "prom-client";
import { REVISION, VERSION } from "./version.js";

/**
 * One name for one concept in both programs: the agent's and the collector's `/metrics` each carry
 * proxyscope_build_info (their `job` tells them apart), so a version skew during a roll-out is one
 * query: `count by (version) (proxyscope_build_info)`.
 */
export const BUILD_INFO = {
  name: "proxyscope_build_info",
  help: "The version and source commit this program was built from; always 1",
  labels: ["version", "revision"],
} as const;

export interface BuildInfoValues {
  version?: string;
  revision?: string;
}

export function registerBuildInfo(registry: Registry, values: BuildInfoValues = {}): Gauge {
  const g = new Gauge({
    name: BUILD_INFO.name,
    help: BUILD_INFO.help,
    labelNames: [...BUILD_INFO.labels],
    registers: [registry],
  });
  g.set({ version: values.version ?? VERSION, revision: values.revision ?? REVISION }, 1);
  return g;
}
