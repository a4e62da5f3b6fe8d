import t from "tap";
import { existsSync, readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

// `serve`'s serving thread keeps, for the agent's whole life, every module it loaded: it must not load
// What only the scan thread or the one-shot commands use (bench/results/rss.md).
// Static value imports only: a type import costs nothing at run time, and a dynamic import() is loaded
// when (if) its command or route runs.
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const VALUE_IMPORT = /^(?:import|export)\s+(?!type\s)(?:[^'";]*?\s+from\s+)?["']([^"']+)["']/gm;

function valueImports(file: string): string[] {
  return [...readFileSync(resolve(root, file), "utf8").matchAll(VALUE_IMPORT)].map((m) => {
    const spec = m[1]!;
    if (!spec.startsWith(".")) return spec;
    return relative(root, resolve(dirname(resolve(root, file)), spec)).replace(/\.js$/, ".ts");
  });
}

/** Every file and package reached from `from` through static value imports. */
function closure(from: readonly string[]): Set<string> {
  const seen = new Set<string>();
  const todo = [...from];
  while (todo.length > 0) {
    const f = todo.pop()!;
    if (seen.has(f)) continue;
    seen.add(f);
    if (f.endsWith(".ts") && existsSync(resolve(root, f))) todo.push(...valueImports(f));
  }
  return seen;
}

// What the scan thread (scan-worker.ts), `scan`, `verify`, `cleanup` and `schema` load, and the
// optional features (web config, basic auth) load on demand.
const SCAN_SIDE = [
  "agent/probes/",
  "agent/rules/",
  "agent/assemble/",
  "agent/render/",
  "agent/cleanup/",
  "agent/scan.ts",
  "agent/report/schema.ts",
  "agent/facts/sources.ts",
  "agent/verify/run.ts",
  "agent/metrics/node-values.ts",
  "common/web-config.ts",
  "common/structured.ts",
];
const PACKAGES = ["yaml", "bcryptjs", "@kubernetes/client-node"];

t.test("the serving thread loads none of the scan side", async (t) => {
  // cli.ts (the entry) imports program.ts, and program.ts imports serve.ts, dynamically for `serve`:
  // all three run on the serving thread.
  const loaded = closure(["agent/cli.ts", "agent/program.ts", "agent/serve.ts"]);
  t.ok(loaded.has("agent/server/app.ts") && loaded.has("fastify"), "the graph was followed");
  const bad = [...loaded].filter(
    (f) => SCAN_SIDE.some((p) => f.startsWith(p)) || PACKAGES.some((p) => f === p || f.startsWith(`${p}/`)),
  );
  t.same(bad.sort(), []);
});

t.test("the scan thread still loads the probes (the check can see them)", async (t) => {
  const loaded = closure(["agent/server/scan-worker.ts"]);
  t.ok(loaded.has("agent/scan.ts"));
  t.ok([...loaded].some((f) => f.startsWith("agent/probes/")));
});
