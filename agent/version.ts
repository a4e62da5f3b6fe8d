import { readFileSync } from "node:fs";

// Read once at load: the version stamped into every report and the build_info metric.
export const AGENT_VERSION: string = (() => {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
      version?: string;
    };
    return pkg.version ?? "unknown";
  } catch {
    return "unknown";
  }
})();
