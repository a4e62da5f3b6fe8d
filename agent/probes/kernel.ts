import { readTextFile } from "../../common/regular-file.js";
import { parseKernelRelease } from "../parse/versions.js";
import { defineProbe } from "./types.js";

// The running kernel, from /proc rather than uname(2): /proc is the host's even in a container.
export const kernelProbe = defineProbe("kernel", {
  async run(ctx) {
    const path = `${ctx.procRoot}/sys/kernel/osrelease`;
    const r = await readTextFile(path, 4096);
    if (!r.ok) return { ok: false, error: r.error };
    const p = parseKernelRelease(r.text);
    if (!p.ok) return { ok: false, error: { kind: "garbage", message: p.error, command: path } };
    return { ok: true, facts: p.value };
  },
});
