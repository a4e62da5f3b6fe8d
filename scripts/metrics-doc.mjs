#!/usr/bin/env node
// Rewrites docs/metrics.md from the built agent's registry (run `npm run build` first).
import { writeFileSync } from "node:fs";
import { AgentMetrics } from "../dist/agent/metrics/agent-metrics.js";
import { metricsDoc } from "../dist/agent/metrics/doc.js";

const described = await new AgentMetrics({ version: "doc", processMetrics: true }).describe();
writeFileSync(new globalThis.URL("../docs/metrics.md", import.meta.url), metricsDoc(described));
