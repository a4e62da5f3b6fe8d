import type { PlanStatus } from "../report/schema.js";

// The terminal table's colours and columns: SGR codes only when asked, and widths that ignore them.

const SGR = {
  critical: "1;31",
  error: "31",
  warning: "33",
  info: "36",
  good: "32",
  bad: "31",
  meh: "33",
  dim: "2",
  bold: "1",
} as const;
export type Tone = keyof typeof SGR;
/** Paints text in a tone, or leaves it as it is when colour is off. */
export type Paint = (t: Tone, s: string) => string;

export const paint =
  (colour: boolean): Paint =>
  (t, s) =>
    colour ? `\u001b[${SGR[t]}m${s}\u001b[0m` : s;

export const VERDICT_TONE: Record<string, Tone> = {
  ready: "good",
  clean: "good",
  attention: "meh",
  leftovers: "meh",
  blocked: "bad",
  unhealthy: "bad",
  unknown: "dim",
  "no-report": "bad",
};
export const STATUS_TONE: Record<PlanStatus, Tone> = {
  done: "good",
  todo: "meh",
  blocked: "bad",
  "n/a": "dim",
};

// Display width ignoring colour codes, so columns line up on a TTY too.
// eslint-disable-next-line no-control-regex
const width = (s: string) => [...s.replace(/\u001b\[[0-9;]*m/g, "")].length;
export const cut = (s: string, n: number) => ([...s].length > n ? `${[...s].slice(0, n - 1).join("")}…` : s);

/**
 * A note too long for its column loses its URLs, not its reason: a failed read's reason is
 * "<url>: <why>", and the why is what the reader acts on (the URL stays in JSON and Markdown).
 */
export function tableNote(note: string): string {
  if ([...note].length <= 80) return note;
  return note
    .replace(/https?:\/\/\S*?:?(?=\s|$)/g, "")
    .replace(/\s+/g, " ")
    .replace(/:\s*:/g, ":")
    .trim();
}

export function table(head: string[], rows: string[][]): string[] {
  const w = head.map((h, i) => Math.max(width(h), ...rows.map((r) => width(r[i] ?? ""))));
  const line = (r: string[]) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c + " ".repeat(w[i]! - width(c))))
      .join("  ")
      .trimEnd();
  return [line(head), ...rows.map(line)];
}
