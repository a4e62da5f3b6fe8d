// The real helm binary for the chart tests: scripts/build-go-tool.sh helm builds it once from the Go module proxy
// at the version it pins (cached outside the checkout) and prints its path. No helm means a failed test
// that names why, never a skip.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, K8sObject, parseYamlDocs } from "./lib.js";

export const CHART = join(ROOT, "charts/proxyscope");

let built: string | undefined;

/** The helm binary's path; throws naming why when it cannot be built (no Go, no module proxy, ...). */
export function helmBinary(): string {
  if (built !== undefined) return built;
  // Long: on a machine where scripts/setup-debian.sh --test has not run yet, this is the one build.
  const r = spawnSync("bash", [join(ROOT, "scripts/build-go-tool.sh"), "helm"], {
    encoding: "utf8",
    timeout: 1_500_000,
  });
  if (r.status !== 0) {
    throw new Error(
      `helm could not be built by scripts/build-go-tool.sh (exit ${r.status ?? r.signal ?? r.error}): ${r.stderr.trim()}`,
    );
  }
  built = r.stdout.trim();
  return built;
}

export type HelmRun = { status: number | null; stdout: string; stderr: string };

/** Runs helm with its state directories in a temporary one, so nothing it writes outlives the call. */
export function helm(args: string[]): HelmRun {
  const home = mkdtempSync(join(tmpdir(), "proxyscope-helm-"));
  try {
    const r = spawnSync(helmBinary(), args, {
      encoding: "utf8",
      timeout: 300_000,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: home,
        HELM_CACHE_HOME: join(home, "cache"),
        HELM_CONFIG_HOME: join(home, "config"),
        HELM_DATA_HOME: join(home, "data"),
      },
    });
    return { status: r.status, stdout: r.stdout, stderr: `${r.stderr}${r.error ?? ""}` };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** `helm template` of the chart with --set-json style overrides; throws with helm's message on failure. */
export function helmTemplate(values: Record<string, unknown> = {}): K8sObject[] {
  const r = helmTemplateRun(values);
  if (r.status !== 0) throw new Error(`helm template failed: ${r.stderr}`);
  return parseYamlDocs(r.stdout, "helm template") as K8sObject[];
}

export function helmTemplateRun(values: Record<string, unknown> = {}): HelmRun {
  const sets = Object.entries(values).flatMap(([k, v]) => ["--set-json", `${k}=${JSON.stringify(v)}`]);
  return helm(["template", "proxyscope", CHART, ...sets]);
}
