/** What every parser returns: a value, or a reason the input was not what we expected. Parsers never throw. */
import type { Result } from "../../common/result.js";

export const parsed = <T>(value: T): Result<T> => ({ ok: true, value });
export const unparsable = <T = never>(error: string): Result<T> => ({ ok: false, error });

/** Quote a bit of bad input for an error message without dumping megabytes or control characters. */
export function excerpt(text: string, max = 80): string {
  const cut = text.length > max ? `${text.slice(0, max)}…` : text;
  return JSON.stringify(cut);
}

/** A name taken from bad input, cut to a bounded length for an error message (escaped where rendered). */
export function clip(text: string, max = 80): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
