import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ToolRunner } from "../../agent/io/run.js";

// Stand-in tools for probe tests: a temporary directory of small executable scripts that print a
// recorded answer, so a probe runs through the real ToolRunner (argv, exit codes, stderr, missing
// tools) without any mock of our own code.

export interface ToolAnswer {
  stdout?: string;
  stderr?: string;
  exit?: number;
  /** The exact argv ("$*") the probe must pass; anything else exits 99 and names what it got. */
  args?: string;
}

/**
 * A recorded answer: `file` is stdout, with `file.stderr` and `file.exit` beside it when the
 * recording had them (the layout test/helpers/uml/record-ipvs.sh writes).
 */
export function recorded(file: string | URL, args?: string): ToolAnswer {
  const path = typeof file === "string" ? file : file.pathname;
  const read = (p: string) => (existsSync(p) ? readFileSync(p, "utf8") : undefined);
  const exit = read(`${path}.exit`);
  return {
    stdout: readFileSync(path, "utf8"),
    stderr: read(`${path}.stderr`),
    exit: exit === undefined ? 0 : Number(exit.trim()),
    args,
  };
}

export interface ToolDir {
  dir: string;
  runner: ToolRunner;
  /** Lines "<tool> <argv>" of every call made so far. */
  calls(): string[];
  remove(): void;
}

const shq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

export function toolDir(tools: Record<string, ToolAnswer | ToolAnswer[]>): ToolDir {
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-tools-"));
  const log = join(dir, ".calls");
  writeFileSync(log, "");
  for (const [name, given] of Object.entries(tools)) {
    // Several answers: one per exact argv (each must name its args); anything else exits 99.
    const answers = Array.isArray(given) ? given : [given];
    const body = answers.map((a, i) => {
      const out = join(dir, `.${name}.${i}.stdout`);
      const err = join(dir, `.${name}.${i}.stderr`);
      writeFileSync(out, a.stdout ?? "");
      writeFileSync(err, a.stderr ?? "");
      return [`/bin/cat ${shq(out)}`, `/bin/cat ${shq(err)} >&2`, `exit ${a.exit ?? 0}`];
    });
    const single = answers.length === 1 ? answers[0]! : null;
    const lines = [
      "#!/bin/sh",
      // PATH is the tool dirs only (ToolRunner's rule), so everything here is absolute.
      `echo ${shq(name)} "$*" >>${shq(log)}`,
      ...(single !== null
        ? [
            single.args === undefined
              ? ""
              : `if [ "$*" != ${shq(single.args)} ]; then echo "unexpected arguments: $*" >&2; exit 99; fi`,
            ...body[0]!,
          ]
        : [
            ...answers.flatMap((a, i) => [
              `if [ "$*" = ${shq(a.args ?? "")} ]; then`,
              ...body[i]!.map((l) => `  ${l}`),
              "fi",
            ]),
            `echo "unexpected arguments: $*" >&2`,
            "exit 99",
          ]),
      "",
    ];
    writeFileSync(join(dir, name), lines.join("\n"));
    chmodSync(join(dir, name), 0o755);
  }
  return {
    dir,
    // The agent's own programs are looked up here too, so a test can stand one in or leave it out.
    runner: new ToolRunner([dir], dir),
    calls: () =>
      readFileSync(log, "utf8")
        .split("\n")
        .filter((l) => l !== ""),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
