import { readTextFile } from "../../common/regular-file.js";
import { parseOsRelease } from "../parse/os-release.js";
import { defineProbe } from "./types.js";

// Under hostRoot only: in the DaemonSet the container's own /etc/os-release describes the image.
const CANDIDATES = ["/etc/os-release", "/usr/lib/os-release"] as const;

export const osReleaseProbe = defineProbe("os-release", {
  async run(ctx) {
    let firstMissing = null;
    for (const source of CANDIDATES) {
      const path = `${ctx.hostRoot.replace(/\/$/, "")}${source}`;
      const r = await readTextFile(path, 64 * 1024);
      if (!r.ok) {
        if (r.missing) {
          firstMissing ??= r.error;
          continue;
        }
        return { ok: false, error: r.error };
      }
      const p = parseOsRelease(r.text);
      if (!p.ok) return { ok: false, error: { kind: "garbage", message: p.error, command: path } };
      return { ok: true, facts: { source, ...p.value } };
    }
    return {
      ok: false,
      error: {
        kind: "io",
        message: `neither ${CANDIDATES.join(" nor ")} exists under ${ctx.hostRoot}`,
        command: firstMissing?.command,
      },
    };
  },
});
