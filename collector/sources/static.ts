import { hasControl } from "../../common/escape.js";
import { readRegularFile } from "../../common/regular-file.js";
import { hasUserinfo } from "../../common/redact.js";
import type { AgentTarget } from "./agents.js";

/** 10,000 nodes of `NODE URL` lines fit many times over; /dev/zero or a huge log does not. */
export const MAX_AGENTS_FILE_BYTES = 4 * 1024 * 1024;

// A wrong file (a binary, a log) is named by its first few bad lines, not by millions of them.
const MAX_ERRORS = 10;

/**
 * A static list of agents for clusters the collector cannot reach through the API: one per line,
 * `URL` or `NODE URL`; blank lines and # comments are skipped. An error names the line (or the value,
 * for flags) and what is wrong with it, never its text: the file may be a secret named by mistake.
 */
export function parseTargets(
  text: string,
  where: (n: number) => string = (n) => `--agents-file line ${n}`,
): { targets: AgentTarget[]; errors: string[] } {
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
    const why =
      parts.length > 2
        ? `${parts.length} fields, expected "URL" or "NODE URL"`
        : !url || !/^https?:\/\/[^\s]+$/i.test(url) || !URL.canParse(url)
          ? "not an http(s) URL"
          : hasUserinfo(url)
            ? "holds a user name or password (the collector never sends them to an agent)"
            : node !== null && hasControl(node)
              ? "the node name holds control characters"
              : null;
    if (why !== null) {
      bad++;
      if (errors.length < MAX_ERRORS) errors.push(`${where(i + 1)}: ${why}`);
      return;
    }
    targets.push({ node, url: url! });
  });
  if (bad > errors.length) errors.push(`${bad - errors.length} more line(s) like these`);
  return { targets, errors };
}

/** Flags take `URL` or `NODE=URL`, one target a value. */
export function targetsFromFlags(urls: readonly string[]): { targets: AgentTarget[]; errors: string[] } {
  const targets: AgentTarget[] = [];
  const errors: string[] = [];
  urls.forEach((u, i) => {
    const where = `value ${i + 1}`;
    const one = /[\r\n]/.test(u)
      ? { targets: [], errors: [`${where}: holds a line break`] }
      : parseTargets(u.replace(/^([^=\s]+)=(https?:\/\/)/i, "$1 $2"), () => where);
    targets.push(...one.targets);
    // In the flag's own syntax, and without the value: it may hold a secret.
    for (const e of one.errors)
      errors.push(e.replace(/: (\d+ fields, .*|not an http\(s\) URL)$/, " is not URL or NODE=URL"));
  });
  return { targets, errors };
}

export async function readTargetsFile(path: string): Promise<{ targets: AgentTarget[]; errors: string[] }> {
  // Regular files only, opened non-blocking and capped: a FIFO must not hang the collector and
  // /dev/zero must not be read until memory runs out.
  const r = await readRegularFile(path, MAX_AGENTS_FILE_BYTES);
  if (!r.ok) return { targets: [], errors: [`cannot read --agents-file ${path}: ${r.error}`] };
  return parseTargets(r.text);
}
