import { stringify } from "yaml";

/** -o json or -o yaml of any report: the same object, so a YAML reader sees what the JSON schema says. */
export function renderStructured(value: unknown, format: "json" | "yaml"): string {
  // aliasDuplicateObjects off: a repeated object is written out again, never as a YAML &anchor.
  return format === "json"
    ? `${JSON.stringify(value, null, 2)}\n`
    : stringify(value, { aliasDuplicateObjects: false });
}
