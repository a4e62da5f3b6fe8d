#!/usr/bin/env node
import { EXIT, type ExitCode } from "../common/exit-codes.js";
import { VERSION } from "../common/version.js";
import { redactUrls } from "../common/redact.js";
import { addFlags, Command, quiet, runProgram } from "../common/cli.js";
import { COLLECTOR_FLAGS, configFrom, type CollectorCommand, type CollectorConfig } from "./config.js";
import { STALE_AFTER_S } from "./sources/agents.js";
import { MAX_AGENTS_FILE_BYTES } from "./sources/static.js";

// Only argv parsing and dispatch live here; each command orchestrates and renders in commands/<name>.ts,
// loaded on demand so `report` never loads the server and `schema` loads nothing else.
type Cmd = { run: (c: CollectorConfig) => Promise<ExitCode> };
const COMMANDS: Record<CollectorCommand, () => Promise<Cmd>> = {
  report: () => import("./commands/report.js"),
  serve: () => import("./commands/serve.js"),
  "lc-audit": () => import("./commands/lc-audit.js"),
  verify: () => import("./commands/verify.js"),
  "scan-node": () => import("./commands/scan-node.js"),
};

const SUMMARY: Record<CollectorCommand, string> = {
  report:
    "gather every node's report and the cluster's kube-proxy facts; print the fleet readiness report (exit 0: nothing reaches --fail-on; 1: something does; 5: no report could be made)",
  serve: "gather every --interval-s; serve / (HTML), /report (JSON), /metrics (fleet gauges), /healthz",
  "lc-audit": "--service NS/NAME: each node's IPVS connection counts per endpoint, side by side",
  verify: "--node NAME: run that node's acceptance check (its agent's GET /verify); exit 1 on a failure",
  "scan-node":
    "NODE: one node's report without the DaemonSet: a privileged pod on NODE runs the agent's scan, then is deleted (docs/scan-node.md)",
};

const AFTER = `
Exit codes: 0 ok; 1 something reached --fail-on, or verify failed; 2 usage error (also an address
            or port that cannot be listened on, an --agents-file that is not a list); 3 internal error;
            5 no report (the API, Prometheus or every agent could not be read; no such Service or node)

Every flag can also be set from the environment variable in [brackets] (the flag wins); see docs/cli.md.
Run "proxyscope <command> --help" for a command's flags. Installed on PATH as kubectl-proxyscope, it
runs as "kubectl proxyscope <command> [flags]" (a kubectl plugin).
Numbers are whole, in decimal digits; a report scanned more than ${STALE_AFTER_S} s ago is "stale";
--agents-file is a regular file of at most ${MAX_AGENTS_FILE_BYTES} bytes.
`;

function program(done: (code: ExitCode) => void): Command {
  const out = (s: string) => process.stdout.write(s);
  const root = quiet(new Command("proxyscope"), out)
    .description("The fleet's readiness to leave kube-proxy's ipvs mode, node by node")
    .usage("<command> [flags]\n       kubectl proxyscope <command> [flags]")
    .version(`proxyscope ${VERSION}`, "--version", "print the version")
    .addHelpText("after", AFTER);
  for (const name of Object.keys(SUMMARY) as CollectorCommand[]) {
    const cmd = quiet(new Command(name), out)
      .description(SUMMARY[name])
      .allowExcessArguments(true)
      .action(async (_o: unknown, c: Command) => {
        const cfg = configFrom(c, process.env, name);
        // A report from Prometheus sends its queries before the report's code loads (gather() takes
        // them up). Not with --accept-file: a bad file is refused at once, not after Prometheus answers.
        if (name === "report" && cfg.acceptFile === null)
          if ((await import("./gather/from-prometheus.js")).startPrometheus(cfg))
            // A few turns of the event loop for the connections to open and the requests to be
            // written: loading the report's modules holds the thread, and a query not yet on the
            // wire is not being evaluated.
            for (let i = 0; i < 4; i++) await new Promise((r) => setImmediate(r));
        done(await (await COMMANDS[name]()).run(cfg));
      });
    if (name === "scan-node") cmd.usage("NODE [flags]");
    root.addCommand(addFlags(cmd, COLLECTOR_FLAGS[name]));
  }
  root.addCommand(
    quiet(new Command("schema"), out)
      .description("print the FleetReport JSON Schema")
      .action(async () => done(await (await import("./commands/schema.js")).run())),
  );
  root.addCommand(
    quiet(new Command("version"), out)
      .description("print the version (also --version)")
      .action(() => {
        out(`proxyscope ${VERSION}\n`);
        done(EXIT.ok);
      }),
  );
  return root;
}

async function main(argv: string[]): Promise<number> {
  let code: ExitCode = EXIT.ok;
  return runProgram(
    "proxyscope",
    program((c) => (code = c)),
    argv,
    COLLECTOR_FLAGS,
    () => code,
  );
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`proxyscope: internal error: ${redactUrls((e as Error)?.stack ?? String(e))}\n`);
    process.exitCode = EXIT.internalError;
  },
);
