import type { Finding, NodeReport, Severity } from "../report/schema.js";
import { NFT_MIN_VERSION, NFTABLES_MIN_KERNEL } from "../parse/versions.js";
import { summaryOf } from "../view/summary.js";
import { terminalSafe as safe } from "../../common/escape.js";

const ORDER: Severity[] = ["critical", "error", "warning", "info"];
const COLOUR: Record<Severity | "ok" | "dim" | "bold", string> = {
  critical: "\u001b[1;31m",
  error: "\u001b[31m",
  warning: "\u001b[33m",
  info: "\u001b[36m",
  ok: "\u001b[32m",
  dim: "\u001b[2m",
  bold: "\u001b[1m",
};
const RESET = "\u001b[0m";

function evidenceLines(f: Finding): string[] {
  return Object.entries(f.evidence).map(([k, v]) => {
    if (Array.isArray(v)) {
      if (v.length === 0) return `      ${safe(k)}: (none)`;
      return [`      ${safe(k)}:`, ...v.map((x) => `        - ${safe(String(x))}`)].join("\n");
    }
    return `      ${safe(k)}: ${safe(String(v))}`;
  });
}

/** Whether this node could run kube-proxy in nftables mode, one line per requirement. */
function capabilityLines(r: NodeReport): string[] {
  const f = r.facts;
  const view = summaryOf(r);
  const k = f.kernel;
  const minKernel = NFTABLES_MIN_KERNEL.join(".");
  const kernel = k
    ? view.kernelNftablesCapable
      ? `kernel ${safe(k.release)}: ok (${minKernel} or newer)`
      : `kernel ${safe(k.release)}: TOO OLD (nftables mode needs ${minKernel})`
    : "kernel: unknown (probe failed)";
  const v = f.nftVersion;
  const nft = !v
    ? "host nft: unknown (probe failed)"
    : v.installed === false
      ? "host nft: not installed (nothing on the host itself writes nftables sets)"
      : v.version === null
        ? `host nft: unknown (${safe(v.detail ?? v.source)})`
        : `host nft ${safe(v.version)} (from ${v.source}): ${view.hostNftNewEnough === false ? `TOO OLD (needs ${NFT_MIN_VERSION.join(".")})` : "ok"}`;
  const m = f.kernelModules;
  let modules: string;
  if (!m) modules = "modules: unknown (probe failed)";
  else {
    const absent = m.modules.filter((x) => x.state === "absent").map((x) => x.name);
    const loaded = m.modules.filter((x) => x.state === "loaded" || x.state === "builtin").length;
    modules = !m.moduleTreeReadable
      ? `modules: ${loaded} of ${m.modules.length} loaded; no module tree under the host root to tell built-in from absent${f.nftables ? " (nf_tables itself answers: nft read the ruleset)" : ""}`
      : absent.length > 0
        ? `modules: MISSING ${absent.join(", ")}`
        : `modules: ok (${loaded} loaded or built in, the rest installed)`;
  }
  return [kernel, nft, modules];
}

/** The report for a person: what runs here, the verdict, then findings by severity, then probe failures. */
export function renderText(r: NodeReport, colour: boolean): string {
  const c = (k: keyof typeof COLOUR, s: string) => (colour ? `${COLOUR[k]}${s}${RESET}` : s);
  const f = r.facts;
  const out: string[] = [];
  out.push(c("bold", `proxyscope ${safe(r.agentVersion)} — node ${safe(r.node)}`));
  out.push(
    `  phase:     ${r.phase}${r.phaseSource === "kernel-state" ? " (inferred from kernel state: kube-proxy did not answer)" : ""}`,
  );
  const verdictColour = ["ready", "clean"].includes(r.verdict)
    ? "ok"
    : ["blocked", "unhealthy"].includes(r.verdict)
      ? "error"
      : "warning";
  const inferred = summaryOf(r).phaseInferred === true;
  out.push(
    `  verdict:   ${c(verdictColour, r.verdict)}${inferred ? " (the phase is inferred from kernel state: confirm what runs here before acting on any remedy that deletes state)" : ""}`,
  );
  const kernel = f.kernel
    ? `${safe(f.kernel.release)}${f.osRelease?.prettyName ? ` (${safe(f.osRelease.prettyName)})` : ""}`
    : "unknown";
  out.push(`  kernel:    ${kernel}`);
  out.push("  nftables mode on this node:");
  out.push(...capabilityLines(r).map((l) => `    ${l}`));
  out.push(
    `  kube-proxy: ${f.proxyMode ? `${safe(f.proxyMode.mode)} mode` : "not answering"}${f.kubeProxyMetrics?.gitVersion ? `, ${safe(f.kubeProxyMetrics.gitVersion)}` : ""}`,
  );
  // What the switch would cut (ipvs-connections-cut-at-switch); unread is said, never left out.
  if (r.phase === "ipvs") {
    const conns = summaryOf(r).ipvsConnections;
    const top = conns?.top[0];
    out.push(
      `  IPVS connections through kube-proxy: ${
        conns == null
          ? "not read"
          : `${conns.established} established (${conns.other} other)${top && top.established > 0 ? `, the busiest ${safe(top.virtualServer)} (${top.established})` : ""}`
      }`,
    );
  }
  if (r.mixed.length > 0)
    out.push(`  also seen: ${r.mixed.map((m) => `${m.mode}: ${safe(m.evidence)}`).join("; ")}`);
  // What a check saw and left out (a CNI's address, Docker's FORWARD DROP): said, so silence is not a blind spot.
  const skipped = summaryOf(r).notCounted ?? [];
  if (skipped.length > 0) {
    out.push(`  seen, not counted (nothing to do): ${skipped.length}`);
    for (const n of skipped) out.push(`    - ${safe(n.seen)} [${safe(n.check)}]: ${safe(n.why)}`);
  }
  out.push(`  scanned:   ${r.scannedAt} in ${r.scanDurationMs} ms`);
  out.push("");
  for (const sev of ORDER) {
    const group = r.findings.filter((x) => x.severity === sev);
    if (group.length === 0) continue;
    out.push(c(sev, `${sev.toUpperCase()} (${group.length})`));
    for (const x of group) {
      out.push(`  ${c(sev, "●")} ${safe(x.title)}  ${c("dim", `[${x.id}]`)}`);
      out.push(...evidenceLines(x));
      out.push(`      fix: ${safe(x.remedy)}`);
      out.push(c("dim", `      ref: ${safe(x.reference)}`));
    }
    out.push("");
  }
  if (r.findings.length === 0) out.push(c("ok", "No findings."), "");
  // On a kube-proxy-free node a refused kube-proxy port is the answer, not a failure worth a warning.
  const expected = (p: NodeReport["probes"][number]) =>
    r.phase === "none" && p.name.startsWith("kube-proxy-") && p.error?.kind === "unreachable";
  const quiet = r.probes.filter((p) => !p.ok && expected(p));
  if (quiet.length > 0) {
    out.push(
      c(
        "dim",
        `kube-proxy's endpoints refused the connection (${quiet.map((p) => safe(p.error?.command ?? p.name)).join(", ")})`,
      ),
      "",
    );
  }
  const failed = r.probes.filter((p) => !p.ok && !expected(p));
  if (failed.length > 0) {
    out.push(
      c(
        "warning",
        `PROBES THAT FAILED (${failed.length} of ${r.probes.length}): their facts are missing, not zero`,
      ),
    );
    for (const p of failed) out.push(`  ${p.name}: ${p.error?.kind}: ${safe(p.error?.message ?? "")}`);
    out.push("");
  }
  for (const [path, n] of Object.entries(r.truncated))
    out.push(c("dim", `(${path} cut for size: ${n} in all)`));
  return out.join("\n");
}
