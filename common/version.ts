import { readFileSync } from "node:fs";

// Built code sits one level deeper (dist/common/) than the source (common/); tests run the source.
const CANDIDATES = ["../../package.json", "../package.json"];

/** Read once at load from package.json: `--version`, every report and the build_info metrics. */
export const VERSION: string = (() => {
  for (const rel of CANDIDATES) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), "utf8")) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === "proxyscope" && typeof pkg.version === "string") return pkg.version;
    } catch {
      // Not there from this layout: try the next.
    }
  }
  return "unknown";
})();

// Written by the build (scripts/write-revision.mjs) beside the compiled code; the source reads the built one.
const REVISION_CANDIDATES = ["./revision.txt", "../dist/common/revision.txt"];
const COMMIT = /^[0-9a-f]{7,64}$/;

/**
 * The source commit the build was made from, for build_info's `revision` label: a hex commit id, or
 * "unknown" (built without git or the image's build argument). Anything else in the file is "unknown":
 * it becomes a label value.
 */
export const REVISION: string = (() => {
  for (const rel of REVISION_CANDIDATES) {
    try {
      const text = readFileSync(new URL(rel, import.meta.url), "utf8").trim();
      return COMMIT.test(text) ? text : "unknown";
    } catch {
      // Not there from this layout: try the next.
    }
  }
  return "unknown";
})();
