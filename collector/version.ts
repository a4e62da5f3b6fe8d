export { AGENT_VERSION as COLLECTOR_VERSION } from "../agent/version.js";
