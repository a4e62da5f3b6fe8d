import { bootUml, type UmlOptions } from "../uml.js";

// The host side every fixture recorder shares (record-*.ts): boot a guest that runs the recording
// script, show what it printed, and exit with its status.

/** Boots a UML guest running `opts.script`, prints its output, and sets this process's exit code to its. */
export async function recordInGuest(opts: UmlOptions): Promise<void> {
  const r = await bootUml(opts);
  process.stdout.write(r.output);
  if (r.modulesFailed.length > 0) console.error(`modules that did not load: ${r.modulesFailed.join(", ")}`);
  console.error(`guest exit status ${r.exitCode} after ${Math.round(r.durationMs)} ms`);
  process.exitCode = r.exitCode;
}
