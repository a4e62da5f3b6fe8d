// Security pass, static part: no shell anywhere in what ships (agent, collector, common), external
// programs only through agent/io/run.ts (spawn with shell: false in a process group of its own, an absolute path resolved from the
// configured tool dirs, PATH limited to those dirs), and child_process nowhere else. Fixed argv is shown
// dynamically by the fault matrix: its tool scripts exit 99 on any argv but the recorded ones, and the
// baseline scan has every probe succeed.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import t from "tap";
import { resolveTool } from "../../../agent/io/run.js";
import { TOOLS, type ToolName } from "../../../agent/io/tools.js";

const ROOT = new URL("../../../", import.meta.url).pathname;

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(ROOT, dir))) {
    const rel = join(dir, e);
    if (statSync(join(ROOT, rel)).isDirectory()) out.push(...sources(rel));
    else if (/\.(ts|js|mjs)$/.test(e)) out.push(rel);
  }
  return out;
}

// What the image ships (bench/ is developer tooling that drives namespaces and UML; not shipped).
const shipped = ["agent", "collector", "common"].flatMap(sources);

const SHELL = [
  /shell\s*:\s*(true|["'`])/,
  /["'`]\/(usr\/)?bin\/(ba|da|z)?sh["'`]/,
  /\bexecSync\s*\(|\bexecFileSync\s*\(|\bspawnSync\s*\(/,
  /\bchild_process\b.*\bexec\b|\{\s*exec\s*[,}]/,
  /execaCommand|execaSync/,
  /["'`](ba|da)?sh["'`]\s*,\s*\[?\s*["'`]-c["'`]/,
];

t.test("no shell in any shipped source", async (t) => {
  t.ok(shipped.length > 50, `${shipped.length} files scanned`);
  for (const f of shipped) {
    const text = readFileSync(join(ROOT, f), "utf8");
    for (const re of SHELL) t.notMatch(text, re, `${f}: ${re}`);
  }
});

t.test("programs are started only in agent/io, by spawn with shell: false in their own group", async (t) => {
  const starters = shipped.filter((f) =>
    /from "(node:)?child_process"|from "execa"/.test(readFileSync(join(ROOT, f), "utf8")),
  );
  for (const f of starters) t.match(f, /^agent\/io\//, `${f} starts programs`);
  const run = readFileSync(join(ROOT, "agent/io/run.ts"), "utf8");
  const calls = run.match(/\bspawn\(/g)?.length ?? 0;
  const noShell = run.match(/shell: false/g)?.length ?? 0;
  const ownGroup = run.match(/detached: true/g)?.length ?? 0;
  t.ok(calls > 0 && calls === noShell, `every spawn call (${calls}) says shell: false (${noShell})`);
  t.equal(ownGroup, calls, "every spawn puts the tool in its own process group (detached: true)");
  t.notMatch(run, /process\.env(?!\[SUITE_MARKER\])/, "no inherited environment (only the suite marker)");
  t.match(run, /PATH: this\.dirs\.join\(":"\)/, "PATH is only the tool dirs");
});

t.test("a tool resolves to an absolute path in the tool dirs or not at all", async (t) => {
  for (const tool of Object.keys(TOOLS) as ToolName[]) {
    const p = resolveTool(tool);
    if (p !== null) t.ok(isAbsolute(p), `${tool} → ${p}`);
    t.equal(resolveTool(tool, ["relative/dir"]), null, `${tool}: a relative dir resolves nothing here`);
  }
});
