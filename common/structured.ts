import { Document, Scalar, visit } from "yaml";

// Characters a terminal may act on that JSON.stringify and the yaml library print raw: DEL, the C1
// controls (U+009B is CSI, as ESC [ is), and the line and bidi controls. Both formats can say them as
// \uXXXX escapes, which read back as the same string.
const RAW = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const escapeRaw = (s: string) => s.replace(RAW, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

/** -o json or -o yaml of any report: the same object, so a YAML reader sees what the JSON schema says. */
export function renderStructured(value: unknown, format: "json" | "yaml"): string {
  // Outside strings JSON is ASCII, so every such character is inside a string, where \uXXXX is valid.
  if (format === "json") return `${escapeRaw(JSON.stringify(value, null, 2))}\n`;
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
