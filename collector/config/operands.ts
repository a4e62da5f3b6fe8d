import { ConfigError, type ReadFlags as Read } from "../../common/cli.js";

// What a command line may not combine: operands where none belong, saved reports beside a source to
// gather from, an output the command does not make. Each is a usage error named before anything runs.

/**
 * `--agents URL URL ...` and `--from-files a.json b.json`: the values after the first arrive as operands;
 * anywhere else an operand is a mistake the user should hear about, not something silently ignored.
 */
export function refuseStrayOperands(
  positionals: readonly string[],
  filesTake: boolean,
  { values: v }: Read,
): void {
  const flagAgents = (v.agents as string[] | undefined) ?? [];
  if (positionals.length === 0 || filesTake) return;
  if (flagAgents.length > 0 && (v.source ?? "agents") === "static") return;
  throw new ConfigError(
    // Quoted, cut and counted: a pasted log as an argument must not become a log-sized error.
    `unexpected argument(s) ${positionals
      .slice(0, 3)
      .map((p) => JSON.stringify(p.length > 80 ? `${p.slice(0, 80)}…` : p))
      .join(" ")}${positionals.length > 3 ? ` and ${positionals.length - 3} more` : ""}` +
      (flagAgents.length > 0 ? " (extra --agents URLs need --source static)" : ""),
  );
}

/** Saved reports replace the gather: a source to gather from as well would be ignored, so it is refused. */
export function refuseSavedWithGather({ values: v, typed }: Read): void {
  const flagFiles = (v.fromFiles as string[] | undefined) ?? [];
  if (flagFiles.length === 0 && v.demo !== true) return;
  const what = flagFiles.length > 0 ? typed.get("fromFiles")! : typed.get("demo")!;
  const other = (["demo", "fromFiles", "source", "agents", "agentsFile", "prometheusUrl"] as const).find(
    (f) => typed.has(f) && typed.get(f) !== what && !(f === "demo" && v.demo === false),
  );
  if (other !== undefined) throw new ConfigError(`${what} cannot be used with ${typed.get(other)}`);
}

/** -o must be one the command makes (the schema takes any command's); junit is the fleet report's only. */
export function refuseOutput({ values: v, typed }: Read, formats: readonly string[] | undefined): void {
  if (v.changes === true && v.output === "junit")
    throw new ConfigError(`${typed.get("output")} junit is for the fleet report, not --changes`);
  if (formats && v.output !== undefined && !formats.includes(String(v.output)))
    throw new ConfigError(`invalid ${typed.get("output")}: must be one of ${formats.join("|")}`);
}

/** scan-node NODE: its one operand is the node, as in `kubectl debug node/NODE`. */
export function scanNodeOperand(args: readonly string[]): string {
  if (args.length !== 1)
    throw new ConfigError(
      args.length === 0
        ? "scan-node needs the node's name: proxyscope scan-node NODE"
        : `scan-node takes one node, got ${args.length} operands`,
    );
  return args[0]!.replace(/^node\//, "");
}
