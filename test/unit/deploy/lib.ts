// Shared by the deploy tests: where things are, loading the manifests, rendering the kustomization, and
// checking objects against the Kubernetes and Prometheus Operator OpenAPI models (kubernetes-models).
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../../..");
export const MANIFESTS = join(ROOT, "manifests");
export const RULES_FILE = join(MANIFESTS, "alerts/proxyscope-rules.yaml");

// Manifests are free-form YAML: the tests navigate them loosely and check their shape explicitly.
export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  [k: string]: any;
};

export function parseYamlDocs(text: string, where: string): unknown[] {
  return parseAllDocuments(text)
    .map((d, i) => {
      if (d.errors.length > 0) throw new Error(`${where} document ${i}: ${d.errors[0]!.message}`);
      return d.toJS();
    })
    .filter((o) => o !== null && o !== undefined);
}

export function walkYaml(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) out.push(...walkYaml(p));
    else if (/\.ya?ml$/.test(e)) out.push(p);
  }
  return out.sort();
}

/** Every Kubernetes object in manifests/, by file (kustomization files and the plain rule file excluded). */
export function manifestObjects(): { file: string; obj: K8sObject }[] {
  const out: { file: string; obj: K8sObject }[] = [];
  for (const f of walkYaml(MANIFESTS)) {
    const rel = relative(ROOT, f);
    if (/kustomization\.ya?ml$/.test(f) || f === RULES_FILE) continue;
    for (const o of parseYamlDocs(readFileSync(f, "utf8"), rel)) out.push({ file: rel, obj: o as K8sObject });
  }
  return out;
}

export function which(cmd: string): string | null {
  for (const d of (process.env.PATH ?? "/usr/bin:/bin").split(":")) {
    const p = join(d, cmd);
    if (existsSync(p)) return p;
  }
  return null;
}

let kustomizeBin: string | undefined;

/**
 * The real kustomize, built once from the Go module proxy at the release scripts/build-go-tool.sh pins
 * (cached outside the checkout); throws naming why when it cannot be built. Never kubectl's copy: its
 * kustomize is whatever that kubectl bundles, and a machine without kubectl would skip the checks.
 */
export function kustomizeBinary(): string {
  if (kustomizeBin !== undefined) return kustomizeBin;
  const r = spawnSync("bash", [join(ROOT, "scripts/build-go-tool.sh"), "kustomize"], {
    encoding: "utf8",
    timeout: 1_500_000,
  });
  if (r.status !== 0)
    throw new Error(
      `kustomize could not be built by scripts/build-go-tool.sh (exit ${r.status ?? r.signal}): ${r.stderr.trim()}`,
    );
  kustomizeBin = r.stdout.trim();
  return kustomizeBin;
}

/** `kustomize build DIR`: its objects, or kustomize's error. */
export function kustomizeBuild(dir: string): { objects: K8sObject[] } | { error: string } {
  const r = spawnSync(kustomizeBinary(), ["build", dir], { encoding: "utf8", timeout: 120_000 });
  if (r.status !== 0) return { error: `${r.stderr}${r.error ?? ""}` };
  return { objects: parseYamlDocs(r.stdout, `kustomize build ${dir}`) as K8sObject[] };
}

/** Module path (in kubernetes-models or @kubernetes-models/prometheus-operator) of an object's model. */
export function modelModule(o: { apiVersion: string; kind: string }): string {
  const [group, version] = o.apiVersion.includes("/") ? o.apiVersion.split("/") : ["", o.apiVersion];
  if (group === "monitoring.coreos.com")
    return `@kubernetes-models/prometheus-operator/${group}/${version}/${o.kind}`;
  return group === ""
    ? `kubernetes-models/${version}/${o.kind}`
    : `kubernetes-models/${group}/${version}/${o.kind}`;
}

/** Schema validation (ajv validators generated from the OpenAPI schemas): types, required fields, enums, formats. */
export async function validateAgainstSchema(o: K8sObject): Promise<string | null> {
  const mod = (await import(modelModule(o))) as Record<string, new (d: unknown) => { validate(): void }>;
  const Model = mod[o.kind];
  if (Model === undefined) return `no model ${o.kind} in ${modelModule(o)}`;
  try {
    new Model(o).validate();
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}

/**
 * Unknown fields: the OpenAPI schemas allow extra properties (the API server's strict field validation is
 * what rejects them), so each object is also type-checked as an object literal against the same package's
 * TypeScript interfaces, whose excess-property check names any field the API does not know.
 * Returns tsc's diagnostics per object index ("" when clean).
 */
export function unknownFieldDiagnostics(objs: K8sObject[]): string[] {
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-k8s-types-"));
  try {
    symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
    writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: "NodeNext",
          moduleResolution: "NodeNext",
          target: "ES2022",
          noEmit: true,
          skipLibCheck: true,
          types: [],
        },
        files: objs.map((_, i) => `o${i}.ts`),
      }),
    );
    objs.forEach((o, i) => {
      writeFileSync(
        join(dir, `o${i}.ts`),
        `import type { I${o.kind} } from "${modelModule(o)}";\nexport const o: I${o.kind} = ${JSON.stringify(o, null, 2)};\n`,
      );
    });
    const r = spawnSync(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "."], {
      cwd: dir,
      encoding: "utf8",
      timeout: 300_000,
    });
    const lines = `${r.stdout}${r.stderr}`.split("\n").filter((l) => l.trim() !== "");
    const per = objs.map((_, i) => lines.filter((l) => l.startsWith(`o${i}.ts(`)).join("\n"));
    // Anything tsc says that is not about one of the objects (a module it cannot resolve, a crash) must
    // not pass silently as "no unknown fields".
    const unattributed = lines.filter((l) => /^\S/.test(l) && !/^o\d+\.ts\(/.test(l));
    if (r.status !== 0 && per.every((d) => d === "")) throw new Error(`tsc failed: ${lines.join("\n")}`);
    if (unattributed.length > 0) throw new Error(`tsc: ${unattributed.join("\n")}`);
    return per;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
