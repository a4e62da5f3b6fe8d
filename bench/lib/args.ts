// The benchmark entry points' flags: node:util's parseArgs, with --help and bad flags answered the way
// the CLIs answer them (common/exit-codes.ts): usage on stdout and 0, or one line naming what is wrong
// plus the usage on stderr and 2, before any work starts. Never a stack trace.
import { relative } from "node:path";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { EXIT } from "../../common/exit-codes.js";

/** The script as it was most likely typed (dist/bench/run.js from the repository), for error lines. */
const tool = () => relative(process.cwd(), process.argv[1] ?? "") || "bench";

/** A flag the script cannot use (a phase it does not have): `<tool>: message` on stderr, exit 2. */
export function usageError(message: string, usage?: string): never {
  process.stderr.write(`${tool()}: ${message}\n${usage === undefined ? "" : `\n${usage.trimEnd()}\n`}`);
  process.exit(EXIT.usage);
}

/**
 * parseArgs(config), its result typed as precisely as parseArgs types it. --help or -h anywhere before
 * a `--` prints `usage` and exits 0 (even beside a wrong flag); an unknown flag, a missing value or a
 * stray argument prints `<tool>: <what parseArgs said>` and the usage to stderr and exits 2.
 */
export function benchArgs<C extends ParseArgsConfig>(
  usage: string,
  config: C,
): ReturnType<typeof parseArgs<C>> {
  const args = config.args ?? process.argv.slice(2);
  const end = args.indexOf("--");
  if ((end < 0 ? args : args.slice(0, end)).some((a) => a === "--help" || a === "-h")) {
    process.stdout.write(`${usage.trimEnd()}\n`);
    process.exit(EXIT.ok);
  }
  try {
    return parseArgs(config);
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS_"))
      usageError((e as Error).message, usage);
    throw e;
  }
}

/** A whole number of things (Services, reps, scans, a port) from `flag`, at least `min`: else exit 2. */
export function count(value: string, flag: string, min = 0): number {
  if (!/^\d+$/.test(value) || Number(value) < min)
    usageError(`${flag} wants a whole number (${min} or more), not '${value}'`);
  return Number(value);
}

/** Seconds, fractions allowed (0.5), from `flag`: anything else exits 2. */
export function seconds(value: string, flag: string): number {
  if (!/^\d+(\.\d+)?$/.test(value)) usageError(`${flag} wants seconds (0 or more, e.g. 0.5), not '${value}'`);
  return Number(value);
}

/** A flag the command cannot run without (an output file, the CLI to measure): missing exits 2. */
export function required<T>(value: T | undefined, flag: string): T {
  if (value === undefined) usageError(`${flag} is required (--help for usage)`);
  return value;
}
