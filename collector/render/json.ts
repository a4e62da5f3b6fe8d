import type { FleetReport } from "../report/schema.js";

export function renderJson(r: FleetReport): string {
  return `${JSON.stringify(r, null, 2)}\n`;
}
