// The agent's commands, run on process.argv when imported (by cli.ts, the entry).
import { addFlags, Command, errorLine, quiet, runProgram } from "../common/cli.js";
import { redactUrls } from "../common/redact.js";
import { useColour } from "../common/colour.js";
import { AGENT_FLAGS, AgentConfig, configFrom, ruleOptions, type AgentCommand } from "./config.js";
import { ToolRunner } from "./io/run.js";
import type { NodeReport } from "./report/schema.js";
import { SEVERITIES } from "./report/severities.js";
import { EXIT } from "../common/exit-codes.js";
import { VERSION as AGENT_VERSION } from "../common/version.js";

// What a command needs beyond flag parsing is imported by that command: `serve`'s serving thread then
// never loads the probes, rules, parsers, report schemas or yaml that only the scan thread and the
// one-shot commands use (bench/results/rss.md).

const EXIT_CODES = `
Exit codes: 0 ok; 1 a finding reached --fail-on, a verify check failed or a cleanup action failed;
            2 usage error (also an address or port that cannot be listened on); 3 internal error;
            4 cleanup --apply refused

Every flag can also be set from the environment variable in [brackets] (the flag wins); see docs/cli.md.
Run "proxyscope-agent <command> --help" for a command's flags.
`;

function scanInput(cfg: AgentConfig) {
  return {
    node: cfg.node,
    agentVersion: AGENT_VERSION,
    hostRoot: cfg.hostRoot,
    procRoot: cfg.procRoot,
    sysRoot: cfg.sysRoot,
    tools: new ToolRunner(cfg.toolDirs, undefined, cfg.kubeProxyNftDir),
    kubeProxyMetricsUrl: cfg.kubeProxyMetricsUrl.replace(/\/+$/, ""),
    kubeProxyHealthUrl: cfg.kubeProxyHealthUrl.replace(/\/+$/, ""),
    nodeIPs: cfg.nodeIPs,
    ruleOptions: ruleOptions(cfg),
    callTimeoutMs: cfg.callTimeoutMs,
    parity:
      cfg.paritySnapshot === null
        ? null
        : { path: cfg.paritySnapshot, maxAgeS: cfg.parityMaxAgeS, node: cfg.node },
    probeTimeoutMs: cfg.probeTimeoutMs,
  };
}

function reachesSeverity(r: NodeReport, failOn: AgentConfig["failOn"]): boolean {
  if (failOn === null) return false;
  const floor = SEVERITIES.indexOf(failOn);
  return r.findings.some((f) => SEVERITIES.indexOf(f.severity) >= floor);
}

/** The program: one subcommand per task, each with its own flags and help. */
function program(
  run: (command: AgentCommand, cfg: AgentConfig) => Promise<number>,
  done: (code: number) => void,
) {
  const root = quiet(new Command("proxyscope-agent"), (s) => process.stdout.write(s))
    .description("What kube-proxy really does on this node, and whether the node can leave ipvs mode")
    .usage("<command> [flags]")
    .version(`proxyscope-agent ${AGENT_VERSION}`, "--version", "print the version")
    .addHelpText("after", EXIT_CODES);
  const sub = (name: AgentCommand, summary: string) => {
    const cmd = quiet(new Command(name), (s) => process.stdout.write(s))
      .description(summary)
      .allowExcessArguments(true)
      .action(async (_o: unknown, c: Command) =>
        done(await run(name, configFrom(c, process.env, AGENT_FLAGS[name]))),
      );
    root.addCommand(addFlags(cmd, AGENT_FLAGS[name]));
  };
  sub("scan", "scan this node once and print the report (exit 1 when a finding reaches --fail-on)");
  sub(
    "serve",
    "run as the node agent: scan on an interval, serve /metrics, /report, /healthz, /readyz, /verify",
  );
  sub("verify", "the node acceptance check after a switch to nftables mode (exit 1 on any failure)");
  sub(
    "cleanup",
    "remove what ipvs mode left behind: a dry run unless --apply, refused unless kube-proxy on this node answers nftables mode",
  );
  root.addCommand(
    quiet(new Command("schema"), (s) => process.stdout.write(s))
      .description("print the NodeReport JSON Schema (/report), or the FleetDigest's (/report/fleet)")
      .option("--fleet-digest", "the FleetDigest's: what the collector reads on /report/fleet")
      .action(async (o: { fleetDigest?: boolean }) => {
        const schema = o.fleetDigest
          ? (await import("./report/fleet-digest.js")).fleetDigestJsonSchema()
          : (await import("./report/schema.js")).nodeReportJsonSchema();
        process.stdout.write(`${JSON.stringify(schema, null, 2)}\n`);
        done(EXIT.ok);
      }),
  );
  root.addCommand(
    quiet(new Command("version"), (s) => process.stdout.write(s))
      .description("print the version (also --version)")
      .action(() => {
        process.stdout.write(`proxyscope-agent ${AGENT_VERSION}\n`);
        done(EXIT.ok);
      }),
  );
  return root;
}

async function runCommand(command: AgentCommand, cfg: AgentConfig): Promise<number> {
  const input = scanInput(cfg);
  // One-shot commands end every tool call still running when they are done (a probe past its
  // deadline may still be waiting on one), so they exit within their deadlines whatever the tools do.
  if (command !== "serve") {
    try {
      return await oneShot(command, cfg, input);
    } finally {
      input.tools.close();
    }
  }
  // Loaded only here: `scan` and `schema` stay free of the server's dependencies.
  const { runServe } = await import("./serve.js");
  try {
    return await runServe(cfg, input);
  } catch (e) {
    // Loaded here, not before: serve loads web-config.ts only when a web config is given.
    const { WebConfigError } = await import("../common/web-config.js");
    if (!(e instanceof WebConfigError)) throw e;
    process.stderr.write(errorLine("proxyscope-agent", e.message));
    return EXIT.usage;
  }
}

async function main(argv: string[]): Promise<number> {
  let code: number = EXIT.ok;
  return runProgram(
    "proxyscope-agent",
    program(runCommand, (c) => (code = c)),
    argv,
    AGENT_FLAGS,
    () => code,
  );
}

async function oneShot(
  command: "scan" | "verify" | "cleanup",
  cfg: AgentConfig,
  input: ReturnType<typeof scanInput>,
): Promise<number> {
  switch (command) {
    case "scan": {
      // Only the renderer the output format needs: yaml alone is 72 modules a `-o json` scan never uses.
      const [{ scanNode }, render] = await Promise.all([import("./scan.js"), renderer(cfg)]);
      const report = await scanNode(input);
      process.stdout.write(render(report));
      return reachesSeverity(report, cfg.failOn) ? EXIT.findings : EXIT.ok;
    }
    case "verify":
      return (await import("./verify/command.js")).verifyCommand(cfg, input);
    case "cleanup":
      return (await import("./cleanup/command.js")).cleanupCommand(cfg, input);
  }
}

async function renderer(cfg: AgentConfig): Promise<(r: NodeReport) => string> {
  if (cfg.output === "json") return (await import("../common/structured-json.js")).renderJson;
  if (cfg.output === "yaml") {
    const { renderStructured } = await import("../common/structured.js");
    return (r) => renderStructured(r, "yaml");
  }
  const { renderText } = await import("./render/text.js");
  const colour = useColour(cfg.color, process.env, process.stdout.isTTY);
  return (r) => `${renderText(r, colour)}\n`;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(
      `proxyscope-agent: internal error: ${redactUrls((e as Error)?.stack ?? String(e))}\n`,
    );
    process.exitCode = EXIT.internalError;
  },
);
