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
