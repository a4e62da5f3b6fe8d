import { excerpt, parsed, unparsable } from "./result.js";
import type { Result } from "../../common/result.js";

/** proxyscope-nft-generation's answer: one unsigned 32-bit decimal and a newline. */
export function parseNftGeneration(text: string): Result<number> {
  const m = /^(\d{1,10})\n?$/.exec(text);
  const n = m ? Number(m[1]) : NaN;
  if (!Number.isSafeInteger(n) || n > 0xffffffff) return unparsable(`not a generation id: ${excerpt(text)}`);
  return parsed(n);
}
