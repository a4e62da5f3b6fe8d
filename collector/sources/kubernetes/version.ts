import type { ConfigurationOptions, VersionApi, VersionInfo } from "@kubernetes/client-node";
import { kubeMajorMinor } from "../../../agent/contract.js";
import type { ClusterFacts } from "../../report/cluster-facts.js";

// getCode(param, options): the options are its second argument, or the call has no deadline.
export const readVersion = (version: VersionApi, o: ConfigurationOptions): Promise<VersionInfo> =>
  version.getCode({}, o);

/** The API server's /version as the checks read it; null when unread or not a version. */
export function toClusterVersion(v: VersionInfo | null): ClusterFacts["version"] {
  const parsed = v ? kubeMajorMinor(v.gitVersion) : null;
  return v && parsed ? { gitVersion: v.gitVersion, ...parsed } : null;
}
