import { readRegularFile } from "../../common/regular-file.js";
import type { AgentTarget } from "./agents.js";

/** 10,000 nodes of `NODE URL` lines fit many times over; /dev/zero or a huge log does not. */
export const MAX_AGENTS_FILE_BYTES = 4 * 1024 * 1024;

// A wrong file (a binary, a log) is named by its first few bad lines, not by millions of them.
const MAX_ERRORS = 10;

/**
 * A static list of agents for clusters the collector cannot reach through the API: one per line,
 * `URL` or `NODE URL`; blank lines and # comments are skipped.
 */
export function parseTargets(text: string): { targets: AgentTarget[]; errors: string[] } {
  const targets: AgentTarget[] = [];
  const errors: string[] = [];
  let bad = 0;
  text.split("\n").forEach((raw, i) => {
    const line = raw.replace(/#.*/, "").trim();
    if (!line) return;
    const parts = line.split(/\s+/);
    const [a, b] = parts;
    const url = parts.length === 1 ? a : b;
    const node = parts.length === 2 ? a! : null;
    if (parts.length > 2 || !url || !/^https?:\/\/[^\s]+$/.test(url)) {
      bad++;
      if (errors.length < MAX_ERRORS)
        errors.push(`line ${i + 1}: expected "URL" or "NODE URL", got ${JSON.stringify(line.slice(0, 80))}`);
      return;
    }
    targets.push({ node, url });
  });
  if (bad > errors.length) errors.push(`${bad - errors.length} more line(s) like these`);
  return { targets, errors };
}

/** Flags take `URL` or `NODE=URL`. */
export function targetsFromFlags(urls: readonly string[]): { targets: AgentTarget[]; errors: string[] } {
  return parseTargets(urls.map((u) => u.replace(/^([^=\s]+)=(https?:\/\/)/, "$1 $2")).join("\n"));
}

export async function readTargetsFile(path: string): Promise<{ targets: AgentTarget[]; errors: string[] }> {
  // Regular files only, opened non-blocking and capped: a FIFO must not hang the collector and
  // /dev/zero must not be read until memory runs out.
  const r = await readRegularFile(path, MAX_AGENTS_FILE_BYTES);
  if (!r.ok) return { targets: [], errors: [`cannot read --agents-file ${path}: ${r.error}`] };
  return parseTargets(r.text);
}
