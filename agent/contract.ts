// What the agent publishes on purpose, and the only agent module the collector may import (lint holds
// it to that): the NodeReport of GET /report, the FleetDigest of GET /report/fleet, the IPVS shapes of GET /ipvs/virtual-server, and the
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
// GET /report/fleet: the part of a NodeReport the fleet rollup reads, a document of its own (the fleet digest).
export { DigestParity, FLEET_DIGEST_VERSION, FleetDigest, ParityDiffer } from "./report/fleet-digest.js";
export { fleetDigestOf } from "./view/fleet-digest.js";
export { RealServer, VirtualServer } from "./facts/ipvs.js";
// Finding ids the fleet plan acts on, derived from the rules' declarations.
export { AFTER_CONFIG_IDS, FINDING_IDS, MEASURE_IDS } from "./rules/catalogue.js";
// What makes a node unhealthy: the collector's --fail-on unhealthy leaves out a node broken only by accepted findings.
export { breaksNow } from "./rules/verdict.js";
// One kernel/version module for both programs.
export { kernelMajorMinor, kubeMajorMinor, releaseCanRunNftables } from "./parse/versions.js";
// Addresses in one spelling for both programs: the evidence carries the kernel's canonical form.
export { canonicalIp } from "./parse/ip-text.js";
export { METRIC } from "./metrics/names.js";
// The node report as the agent's `scan` prints it: what `proxyscope scan-node` shows of a scan pod's report.
export { renderText } from "./render/text.js";
