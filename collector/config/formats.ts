// THE lists of -o formats, apart from the flags that offer them and the schema that checks them, so
// that each derives from here and none from the other.

/** THE lists of -o formats: the help text, the schema, the check per command and docs/cli.md derive from them. */
export const REPORT_FORMATS = ["table", "json", "yaml", "markdown", "html", "csv", "junit"] as const;
export const VERIFY_FORMATS = ["text", "json", "yaml"] as const;
/** Every -o any command takes: what the schema accepts before the command's own list is checked. */
export const FORMATS = [...new Set([...REPORT_FORMATS, ...VERIFY_FORMATS])] as [
  (typeof REPORT_FORMATS)[number] | (typeof VERIFY_FORMATS)[number],
  ...((typeof REPORT_FORMATS)[number] | (typeof VERIFY_FORMATS)[number])[],
];

/** Where node reports come from (--source): the help text and the schema derive from this list. */
export const SOURCES = ["agents", "prometheus", "static"] as const;
