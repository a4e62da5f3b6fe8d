import type { Finding } from "../../agent/contract.js";
import { findingPageUrl } from "../../common/finding-page.js";

/** What a cluster check says; its `reference` (the link to the finding's page) is added from the id. */
export type CheckFinding = Omit<Finding, "reference">;

/** Each finding's reference is its page, derived from the id so no check can point elsewhere. */
export function withPages(findings: readonly CheckFinding[]): Finding[] {
  return findings.map((f) => ({ ...f, reference: findingPageUrl(f.id) }));
}
