import { Document, Scalar, visit } from "yaml";
import { escapeRaw, RAW, renderJson } from "./structured-json.js";

/** -o json or -o yaml of any report: the same object, so a YAML reader sees what the JSON schema says. */
export function renderStructured(value: unknown, format: "json" | "yaml"): string {
  if (format === "json") return renderJson(value);
  // aliasDuplicateObjects off: a repeated object is written out again, never as a YAML &anchor.
  const doc = new Document(value, { aliasDuplicateObjects: false });
  // A string holding one is written double-quoted (keys too), the one YAML style where \uXXXX is an escape.
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value === "string" && new RegExp(RAW.source).test(node.value))
        node.type = Scalar.QUOTE_DOUBLE;
    },
  });
  return escapeRaw(doc.toString());
}
