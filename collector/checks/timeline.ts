import type { ClusterVersion } from "../report/cluster-facts.js";
import type { DeprecationStage } from "../report/schema.js";

/** KEP-5495's stages by minor release (Kubernetes 1.x). */
export function deprecationStage(v: ClusterVersion | null): DeprecationStage {
  if (!v || v.major !== 1) return "unknown";
  if (v.minor >= 46) return "gate-removed";
  if (v.minor >= 43) return "removed";
  if (v.minor >= 40) return "off-by-default";
  if (v.minor >= 37) return "gated";
  if (v.minor >= 35) return "warning";
  return "before-deprecation";
}
