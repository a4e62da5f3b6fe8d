import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TOOLS, type ToolName } from "../../agent/io/tools.js";

// Wrapper scripts that hang the ways real wrappers do (a shell that starts the real program), for every
// tool the agent runs. Each directory is unique, and its path is the marker: it is in the wrapper's argv
// (/bin/sh <dir>/<tool>) and in the environment of everything the wrapper starts, so a test can count
// the processes a call left behind from /proc.

export const HANG_KINDS = {
  /** The wrapper starts a program that never answers and waits for it. */
  "never-answers": ["/bin/sleep 1000000"],
  /** The wrapper forks a program into the background, which keeps stdout open, and exits 0. */
  "forks-background": ["/bin/sleep 1000000 &", "echo partial", "exit 0"],
  /** The wrapper and what it starts ignore SIGTERM (the disposition is inherited across exec). */
  "ignores-term": ["trap '' TERM", "/bin/sleep 1000000"],
  /** Both: a background program that ignores SIGTERM holds stdout after the wrapper exits. */
  "ignores-term-background": ["trap '' TERM", "/bin/sleep 1000000 &", "echo partial", "exit 0"],
} as const;
export type HangKind = keyof typeof HANG_KINDS;

export interface HangingTools {
  dir: string;
  /** The unique string every process of these tools carries (in argv or environment). */
  marker: string;
  remove(): void;
}

export function hangingToolDir(
  kind: HangKind,
  tools: readonly ToolName[] = Object.keys(TOOLS) as ToolName[],
): HangingTools {
  const dir = mkdtempSync(join(tmpdir(), `proxyscope-hang-${kind}-`));
  for (const tool of tools) {
    const body = ["#!/bin/sh", `export PROXYSCOPE_HANG_MARK='${dir}'`, ...HANG_KINDS[kind], ""];
    writeFileSync(join(dir, tool), body.join("\n"));
    chmodSync(join(dir, tool), 0o755);
  }
  return { dir, marker: dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
