// What the agent publishes on purpose, and the only agent module the collector may import (lint holds
// it to that): the NodeReport of GET /report, the IPVS shapes of GET /ipvs/virtual-server, and the
// names of the metrics the collector's PromQL reads. GET /verify's answer is in common/verify-result.ts.
export {
  Finding,
  NodeReport,
  Phase,
  SCHEMA_VERSION,
  SEVERITIES,
  Severity,
  Verdict,
} from "./report/schema.js";
export { RealServer, VirtualServer } from "./facts/ipvs.js";
export { METRIC, type MetricName } from "./metrics/names.js";
