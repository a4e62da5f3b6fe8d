// -o json of any report, apart from -o yaml: a one-shot `scan -o json` then loads no yaml library
// (72 modules, ~290 KB: a tenth of the one-shot scan's module loading).

// Characters a terminal may act on that JSON.stringify and the yaml library print raw: DEL, the C1
// controls (U+009B is CSI, as ESC [ is), and the line and bidi controls. Both formats can say them as
// \uXXXX escapes, which read back as the same string.
export const RAW = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
export const escapeRaw = (s: string) =>
  s.replace(RAW, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

/** -o json: outside strings JSON is ASCII, so every such character is inside a string, where \uXXXX is valid. */
export function renderJson(value: unknown): string {
  return `${escapeRaw(JSON.stringify(value, null, 2))}\n`;
}
