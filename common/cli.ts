import { Command, CommanderError, Option } from "commander";
import { terminalSafe } from "./escape.js";
import { redactUrls } from "./redact.js";

// Both programs' command lines are built here on commander (help per command, suggestions for typos,
// --version); values are read from the command line, then the environment, then defaults, and checked
// by each program's zod schema, so an error names what the user typed: the flag or the variable.

/** A bad flag, variable or argument, as one readable, bounded line. */
export class ConfigError extends Error {}

export interface FlagSpec {
  /** commander's flags, e.g. "-o, --output <format>"; no <value>: a switch. */
  flags: string;
  /** The config field it fills. */
  field: string;
  help: string;
  /** Environment variables, the first the documented one; later ones are names manifests already use. */
  env?: readonly string[];
  /** Repeatable; from the environment, a comma- or space-separated list. */
  multiple?: boolean;
  hidden?: boolean;
}

/** PROXYSCOPE_<FLAG>: --scan-interval-s is PROXYSCOPE_SCAN_INTERVAL_S, --web.config.file PROXYSCOPE_WEB_CONFIG_FILE. */
const envName = (long: string) => `PROXYSCOPE_${long.replace(/^--/, "").replace(/[-.]/g, "_").toUpperCase()}`;

const longOf = (s: FlagSpec) => /--[a-z0-9.-]+/.exec(s.flags)![0];
const isSwitch = (s: FlagSpec) => !/[<[]/.test(s.flags);

/** The environment variables a flag is read from: PROXYSCOPE_<FLAG> unless the spec names others. */
export const envOf = (s: FlagSpec): readonly string[] => s.env ?? [envName(longOf(s))];

/** Adds the flags to a command; the help line names the environment variable too. */
export function addFlags(cmd: Command, specs: readonly FlagSpec[]): Command {
  for (const s of specs) {
    const o = new Option(s.flags, `${s.help} [${envOf(s).join(", ")}]`);
    // Commander keeps the last of a repeated flag; a repeatable one collects them all.
    if (s.multiple) o.argParser((v: string, prev: string[] | undefined) => [...(prev ?? []), v]);
    if (s.hidden) o.hideHelp();
    cmd.addOption(o);
  }
  return cmd;
}

export interface ReadFlags {
  /** Each field the user set, as typed (a string, a string[] or a boolean). */
  values: Record<string, string | string[] | boolean>;
  /** Where each field came from: "--port" or "PROXYSCOPE_PORT", for the error. */
  typed: Map<string, string>;
}

const TRUE = /^(1|true|yes|on)$/i;
const FALSE = /^(0|false|no|off)$/i;

/** Flags win over the environment; an unset or empty variable is not set. */
export function readFlags(cmd: Command, specs: readonly FlagSpec[], env: NodeJS.ProcessEnv): ReadFlags {
  const values: ReadFlags["values"] = {};
  const typed = new Map<string, string>();
  const opts = cmd.opts();
  // Two flags may fill one field (-n and --agent-namespace): the command line first, then the environment.
  for (const s of specs) {
    const long = longOf(s);
    const key = cmd.options.find((o) => o.long === long)?.attributeName();
    if (key === undefined || cmd.getOptionValueSource(key) !== "cli" || typed.has(s.field)) continue;
    values[s.field] = opts[key] as string | string[] | boolean;
    typed.set(s.field, long);
  }
  for (const s of specs) {
    for (const name of envOf(s)) {
      const v = env[name];
      if (typed.has(s.field) || v === undefined || v === "") continue;
      typed.set(s.field, name);
      if (isSwitch(s)) {
        if (!TRUE.test(v) && !FALSE.test(v)) throw new ConfigError(`invalid ${name}: must be true or false`);
        values[s.field] = TRUE.test(v);
      } else values[s.field] = s.multiple ? v.split(/[,\s]+/).filter(Boolean) : v;
    }
  }
  return { values, typed };
}

/**
 * A message for stderr as one line: a node's or the API's words (and the user's own flags) cannot steer
 * the terminal, and no URL shows its password. Every error either program prints goes through here.
 */
export function errorLine(program: string, message: string): string {
  return `${program}: ${safeText(message)}\n`;
}

/** The text of errorLine, for a line with its own prefix (a log line). */
export function safeText(message: string): string {
  return terminalSafe(redactUrls(message));
}

/** Quoted text cut to 80 characters, the line to 500: a pasted blob must not become a blob-sized error. */
function boundedLine(text: string): string {
  const first = text.split("\n")[0] ?? "";
  const clipped = first.replace(/'([^']{80})[^']+'/g, "'$1…'");
  return clipped.length > 500 ? `${clipped.slice(0, 500)}…` : clipped;
}

/**
 * Commander's error as our one line: "Unknown option '--jsno' (did you mean --json?)"; a flag another
 * command takes says which: "Unknown option '--interval-s' (a flag of serve)".
 */
function usageMessage(e: CommanderError, flagsOf: Record<string, readonly FlagSpec[]> = {}): string {
  const unknown = /unknown option '(--[a-z0-9.-]+)'/.exec(e.message)?.[1];
  const owners = unknown
    ? Object.keys(flagsOf).filter((c) => flagsOf[c]!.some((s) => longOf(s) === unknown))
    : [];
  if (owners.length > 0) return `Unknown option '${unknown}' (a flag of ${owners.join(", ")})`;
  const [first = "", ...rest] = e.message.replace(/^error: /, "").split("\n");
  const hint = /\(Did you mean (.*)\?\)/.exec(rest.join(" "))?.[1];
  const line = boundedLine(first.charAt(0).toUpperCase() + first.slice(1));
  const argMissing = /^Option '(?:-\w, )?(--[\w.-]+)[^']*' argument missing$/.exec(line);
  const said = argMissing ? `${argMissing[1]} needs a value` : line;
  return `${said}${hint ? ` (did you mean ${boundedLine(hint).slice(0, 100)}?)` : ""}`;
}

/** Commander errors thrown, not printed: the caller decides the words and the exit code. */
export function quiet(cmd: Command, out: (s: string) => void = () => undefined): Command {
  return cmd
    .exitOverride()
    .configureOutput({ writeOut: out, writeErr: out, outputError: () => undefined })
    .showSuggestionAfterError(true);
}

/**
 * Parses flags only (no command) against these specs: what the unit tests and the fuzz test call.
 * Throws ConfigError on anything commander refuses; returns the command and its leftover operands.
 */
export function parseFlagsOnly(name: string, specs: readonly FlagSpec[], argv: readonly string[]): Command {
  const cmd = quiet(addFlags(new Command(name), specs))
    .helpOption(false)
    .allowExcessArguments(true);
  try {
    cmd.parse([...argv], { from: "user" });
  } catch (e) {
    if (e instanceof CommanderError) throw new ConfigError(usageMessage(e));
    throw e;
  }
  return cmd;
}

export { Command };

/** A zod parse of the raw settings; the first issue names the flag or variable the user typed. */
export function checked<T>(
  schema: {
    safeParse(
      v: unknown,
    ):
      | { success: true; data: T }
      | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };
  },
  raw: unknown,
  typed: Map<string, string>,
  specs: readonly FlagSpec[],
  fallback: Record<string, string> = {},
): T {
  const r = schema.safeParse(raw);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const field = String(issue.path[0] ?? "");
  const flag =
    typed.get(field) ?? fallback[field] ?? specs.find((s) => s.field === field)?.flags.split(" ")[0] ?? field;
  throw new ConfigError(`invalid ${flag}: ${issue.message}`);
}

/**
 * Runs a program to its exit code: --help and --version are 0; a usage error is one line on stderr
 * and 2; anything else (a bug) is thrown for the caller's "internal error".
 */
export async function runProgram(
  name: string,
  program: Command,
  argv: readonly string[],
  flagsOf: Record<string, readonly FlagSpec[]>,
  code: () => number,
): Promise<number> {
  try {
    await program.parseAsync([...argv], { from: "user" });
    return code();
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.exitCode === 0) return 0;
      // No command at all: the help already went to stderr.
      if (e.code !== "commander.help")
        process.stderr.write(errorLine(name, `${usageMessage(e, flagsOf)} (see --help)`));
      return 2;
    }
    if (e instanceof ConfigError) {
      process.stderr.write(errorLine(name, `${e.message} (see --help)`));
      return 2;
    }
    throw e;
  }
}
