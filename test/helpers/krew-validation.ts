// krew's own checks of a plugin manifest, ported to TypeScript so a test can hold ours to them without
// krew's Go toolchain. From kubernetes-sigs/krew:
// - pkg/index/validation/validate.go ValidatePlugin / validatePlatform / validateSelector: apiVersion
//   krew.googlecontainertools.github.com/v1alpha2, kind Plugin, a name matching ^[\w-]+$ that is not a
//   Windows device name and equals the file's name, a shortDescription, at least one platform, a
//   version krew's semver parses (the "v" prefix is required: krew docs, "Writing Krew plugin
//   manifests"); per platform: uri, a sha256 matching ^[a-f0-9]{64}$, bin, file operations, a
//   selector that is not nil or empty and uses only the keys os and arch.
// - cmd/validate-krew-manifest/main.go: the file ends in .yaml; every platform's selector matches a
//   supported os/arch and no os/arch is selected by two platforms; lines of description and caveats
//   at most 80 characters, shortDescription 70 (warnings there; errors here, so they are seen).
//   The copy read lists windows 386/amd64, linux 386/amd64/arm and darwin 386/amd64; the arm64
//   platforms krew installs for today (linux/arm64, darwin/arm64, windows/arm64) are added.
import { basename, extname } from "node:path";

const WINDOWS_FORBIDDEN = [
  "CON",
  "PRN",
  "AUX",
  "NUL",
  ...[1, 2, 3, 4, 5, 6, 7, 8, 9].flatMap((i) => [`COM${i}`, `LPT${i}`]),
];
export const KREW_PLATFORMS: [string, string][] = [
  ["windows", "386"],
  ["windows", "amd64"],
  ["windows", "arm64"],
  ["linux", "386"],
  ["linux", "amd64"],
  ["linux", "arm"],
  ["linux", "arm64"],
  ["darwin", "386"],
  ["darwin", "amd64"],
  ["darwin", "arm64"],
];
// semver.org 2.0.0's grammar, after the required "v".
const SEMVER =
  /^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

type Expr = { key?: unknown; operator?: unknown; values?: unknown };
type Selector =
  { matchLabels?: Record<string, unknown> | null; matchExpressions?: Expr[] | null } | null | undefined;
interface Platform {
  selector?: Selector;
  uri?: unknown;
  sha256?: unknown;
  files?: unknown;
  bin?: unknown;
}

/** metav1.LabelSelectorAsSelector(...).Matches({os, arch}) for In, NotIn, Exists, DoesNotExist. */
function selects(sel: Selector, os: string, arch: string): boolean {
  if (!sel) return false;
  const labels: Record<string, string> = { os, arch };
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of sel.matchExpressions ?? []) {
    const have = labels[String(e.key)];
    const values = Array.isArray(e.values) ? e.values.map(String) : [];
    if (e.operator === "In" && (have === undefined || !values.includes(have))) return false;
    if (e.operator === "NotIn" && have !== undefined && values.includes(have)) return false;
    if (e.operator === "Exists" && have === undefined) return false;
    if (e.operator === "DoesNotExist" && have !== undefined) return false;
  }
  return true;
}

function selectorErrors(sel: Selector): string[] {
  if (sel === null || sel === undefined) return ["nil selector is not supported"];
  const labels = sel.matchLabels;
  const exprs = sel.matchExpressions;
  if ((labels === undefined || labels === null) && (exprs ?? []).length === 0)
    return ["empty selector is not supported"];
  const keys = [...Object.keys(labels ?? {}), ...(exprs ?? []).map((e) => String(e.key))];
  const bad = keys.filter((k) => k !== "os" && k !== "arch");
  if (bad.length > 0) return [`key ${JSON.stringify(bad[0])} not supported`];
  if (labels && Object.keys(labels).length === 0) return ["matchLabels specified but empty"];
  if (exprs && exprs.length === 0) return ["matchExpressions specified but empty"];
  return [];
}

function longLines(s: unknown, max: number): boolean {
  return typeof s === "string" && s.split("\n").some((l) => l.length > max && l.trim().includes(" "));
}

/** Every rule the manifest at `path` breaks, in krew's words; [] when krew would take it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a manifest as parsed, held to krew's rules
export function krewErrors(path: string, m: any): string[] {
  const errors: string[] = [];
  if (extname(path) !== ".yaml")
    errors.push(`expected manifest extension ".yaml" but found ${JSON.stringify(extname(path))}`);
  const name = basename(path, extname(path));
  if (m?.apiVersion !== "krew.googlecontainertools.github.com/v1alpha2")
    errors.push(`plugin manifest has apiVersion=${JSON.stringify(m?.apiVersion)}, not supported`);
  if (m?.kind !== "Plugin")
    errors.push(`plugin manifest has kind=${JSON.stringify(m?.kind)}, but only "Plugin" is supported`);
  if (!/^[\w-]+$/.test(name) || WINDOWS_FORBIDDEN.some((f) => f.toLowerCase() === name.toLowerCase()))
    errors.push(`the plugin name ${JSON.stringify(name)} is not allowed`);
  if (m?.metadata?.name !== name)
    errors.push(`plugin should be named ${JSON.stringify(name)}, not ${JSON.stringify(m?.metadata?.name)}`);
  const spec = m?.spec ?? {};
  if (!spec.shortDescription) errors.push("should have a short description");
  const platforms: Platform[] = Array.isArray(spec.platforms) ? spec.platforms : [];
  if (platforms.length === 0) errors.push("should have a platform specified");
  if (!spec.version) errors.push("should have a version specified");
  else if (!SEMVER.test(String(spec.version)))
    errors.push(`failed to parse plugin version ${JSON.stringify(spec.version)}`);
  platforms.forEach((p, i) => {
    const at = `platform[${i}]`;
    if (!p.uri) errors.push(`${at}: URI has to be set`);
    if (!p.sha256) errors.push(`${at}: sha256 sum has to be set`);
    else if (!/^[a-f0-9]{64}$/.test(String(p.sha256)))
      errors.push(`${at}: sha256 value ${String(p.sha256)} is not valid`);
    if (!p.bin) errors.push(`${at}: bin has to be set`);
    if (!Array.isArray(p.files) || p.files.length === 0)
      errors.push(`${at}: can't have a plugin without specifying file operations`);
    for (const e of selectorErrors(p.selector)) errors.push(`${at}: invalid platform selector: ${e}`);
    if (!KREW_PLATFORMS.some(([os, arch]) => selects(p.selector, os, arch)))
      errors.push(`${at}: selector doesn't match any supported platforms`);
  });
  for (const [os, arch] of KREW_PLATFORMS) {
    const hits = platforms.flatMap((p, i) => (selects(p.selector, os, arch) ? [i] : []));
    if (hits.length > 1)
      errors.push(`multiple spec.platforms (at indexes ${hits.join(",")}) select os=${os}/arch=${arch}`);
  }
  if (longLines(spec.description, 80)) errors.push("line length in `description` exceeds 80 characters");
  if (longLines(spec.shortDescription, 70))
    errors.push("line length in `shortDescription` exceeds 70 characters");
  if (longLines(spec.caveats, 80)) errors.push("line length in `caveats` exceeds 80 characters");
  return errors;
}
