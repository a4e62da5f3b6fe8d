import { kubeIpvs0Absent, parseKubeIpvs0Json } from "../parse/kube-ipvs0.js";
import { defineProbe } from "./types.js";

const DEVICE = "kube-ipvs0";
const ARGS = ["-j", "-d", "addr", "show", "dev", DEVICE] as const;
// One address per Service IP: 10,000 Services print about 2 MB of JSON.
const MAX_BYTES = 64 * 1024 * 1024;

// The dummy link ipvs mode binds every Service IP to. `ip` exits 1 with 'Device "kube-ipvs0" does
// not exist.' when there is none: that is an answer (present: false), not a failure.
export const kubeIpvs0Probe = defineProbe("kube-ipvs0", {
  typedByParser: true,
  // The addresses probe lists every link, this one among them: its listing of this scan is used
  // rather than running `ip` again (in UML each spawn from the agent costs ~0.5 s of fork, and at
  // 10,000 Services the link's own answer is 2 MB of JSON to parse a second time).
  needs: ["addresses"],
  async run(ctx) {
    const fromListing = ctx.shared?.kubeIpvs0;
    if (fromListing?.ok) return { ok: true, facts: fromListing.value };
    const command = `ip ${ARGS.join(" ")}`;
    const r = await ctx.tools.run("ip", ARGS, {
      timeoutMs: ctx.callTimeoutMs,
      maxBytes: MAX_BYTES,
      okExitCodes: [0, 1],
    });
    if (!r.ok) return r;
    if (r.exitCode !== 0) {
      if (/does not exist/.test(r.stderr)) {
        return { ok: true, facts: kubeIpvs0Absent() };
      }
      const first = r.stderr.trim().split("\n")[0]?.slice(0, 300) ?? "";
      return {
        ok: false,
        error: {
          kind: /operation not permitted|permission denied/i.test(r.stderr) ? "not-permitted" : "exit-status",
          message: `ip exited ${r.exitCode}${first ? `: ${first}` : ""}`,
          command,
        },
      };
    }
    const p = parseKubeIpvs0Json(r.stdout, DEVICE);
    if (!p.ok) return { ok: false, error: { kind: "garbage", message: p.error, command } };
    return { ok: true, facts: p.value };
  },
});
