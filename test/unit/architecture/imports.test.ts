import t from "tap";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

// The source's shape, checked from its imports: no module cycles, and a folder tells what its files
// may touch. Type-only imports count too: a type borrowed from a layer above is a back-arrow all the same.
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return p.endsWith(".ts") && !p.endsWith(".d.ts") ? [p] : [];
  });
}

const IMPORT = /^(?:import|export)\s+(?:[^'";]*?\s+from\s+)?["']([^"']+)["']/gm;

/** Imports of one file: relative ones resolved to repository paths, the rest as written. */
function imports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(IMPORT)].map((m) => {
    const spec = m[1]!;
    if (!spec.startsWith(".")) return spec;
    return relative(root, resolve(dirname(file), spec)).replace(/\.js$/, ".ts");
  });
}

const files = [
  ...sources(join(root, "agent")),
  ...sources(join(root, "collector")),
  ...sources(join(root, "common")),
  ...sources(join(root, "bench")),
].map((f) => relative(root, f));
const graph = new Map(files.map((f) => [f, imports(join(root, f)).filter((i) => i.endsWith(".ts"))]));

/** Every cycle, as the path around it (Tarjan's strongly connected components of more than one file, or a self-import). */
function cycles(g: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of g.get(v) ?? []) {
      if (!g.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (g.get(v) ?? []).includes(v)) out.push(scc.sort());
    }
  };
  for (const v of g.keys()) if (!idx.has(v)) visit(v);
  return out;
}

t.test("the graph was read", async (t) => {
  t.ok(files.length > 100, `${files.length} source files`);
  t.ok(graph.get("agent/scan.ts")?.includes("agent/probes/registry.ts"), "a known value import is seen");
  t.ok(graph.get("agent/rules/rule.ts")?.includes("agent/view/build.ts"), "a type-only import is seen");
  t.ok(graph.get("bench/fleet.ts")?.includes("bench/lib/timed-run.ts"), "the benchmarks are in the graph");
});

t.test("no import cycles", async (t) => {
  t.same(cycles(graph), []);
});

/** agent/rules/after/x.ts -> agent/rules; agent/scan.ts stays itself. */
const unit = (f: string) => {
  const parts = f.split("/");
  return parts.length > 2 ? parts.slice(0, 2).join("/") : f;
};

t.test("no cycles between the agent's folders", async (t) => {
  const folders = new Map<string, string[]>();
  for (const [file, deps] of graph) {
    if (!file.startsWith("agent/")) continue;
    const from = unit(file);
    const to = deps
      .filter((d) => d.startsWith("agent/"))
      .map(unit)
      .filter((d) => d !== from);
    folders.set(from, [...new Set([...(folders.get(from) ?? []), ...to])]);
  }
  t.same(cycles(folders), []);
});

t.test("the cycle finder finds a cycle", async (t) => {
  t.same(
    cycles(
      new Map([
        ["a", ["b"]],
        ["b", ["c"]],
        ["c", ["a"]],
        ["d", ["a"]],
      ]),
    ),
    [["a", "b", "c"]],
  );
});

// Pure folders compute; only io/ and probes/ (and the programs' edges: server, cli, commands) touch the
// node. A pure file that imports I/O code, or a module that reads files or runs programs, is a back-arrow.
const PURE = [
  "agent/parse/",
  "agent/facts/",
  "agent/rules/",
  "agent/view/",
  "agent/assemble/",
  "agent/report/",
];
const IO_CODE = [
  "agent/io/",
  "agent/probes/",
  "agent/server/",
  "agent/scan.ts",
  "common/http.ts",
  "common/http-server.ts",
  "common/regular-file.ts",
];
const IO_MODULES = [
  "node:fs",
  "node:fs/promises",
  "node:child_process",
  "node:http",
  "node:https",
  "node:dgram",
];

t.test("pure folders import no I/O", async (t) => {
  const bad: string[] = [];
  for (const [file, deps] of graph) {
    if (!PURE.some((p) => file.startsWith(p))) continue;
    for (const d of imports(join(root, file)))
      if (IO_CODE.some((p) => d.startsWith(p)) || IO_MODULES.includes(d)) bad.push(`${file} -> ${d}`);
    void deps;
  }
  t.same(bad, []);
});

// The benchmarks stand above the agent as its CLI does: they drive a probe's cache on purpose.
t.test("nothing below the probes imports them back", async (t) => {
  const bad = [...graph]
    .filter(
      ([file]) => !file.startsWith("agent/probes/") && file !== "agent/scan.ts" && !file.startsWith("bench/"),
    )
    .flatMap(([file, deps]) =>
      deps
        .filter((d) => d.startsWith("agent/probes/") && d !== "agent/probes/registry.ts")
        .map((d) => `${file} -> ${d}`),
    );
  t.same(bad, []);
});
