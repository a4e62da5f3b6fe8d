import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { nodeReportJsonSchema, NodeReport } from "../../agent/report/schema.js";

const ajv = new Ajv2020({ strict: false, allErrors: true });
// The schema says scannedAt is a date-time; without the formats ajv would only warn and accept anything.
addFormats.default(ajv);
const validateJson = ajv.compile(nodeReportJsonSchema() as object);

/**
 * Parses what `proxyscope-agent scan --json` printed and checks it against the published JSON Schema
 * (an independent validator) and the zod schema; throws with the reasons when either disagrees.
 */
export function parseScanOutput(stdout: string): NodeReport {
  const json: unknown = JSON.parse(stdout);
  if (!validateJson(json))
    throw new Error(`scan --json violates the published schema: ${ajv.errorsText(validateJson.errors)}`);
  return NodeReport.parse(json);
}

export const findingIds = (r: NodeReport): string[] => r.findings.map((f) => f.id).sort();
export const finding = (r: NodeReport, id: string) => r.findings.find((f) => f.id === id);
