import type { KernelFacts } from "../facts/host.js";
import { excerpt, parsed, unparsable, type Parsed } from "./result.js";

/** Parses /proc/sys/kernel/osrelease ("6.8.0-51-generic", "5.4.0", "6.1.176"). */
export function parseKernelRelease(text: string): Parsed<KernelFacts> {
  const release = text.trim();
  const m = /^(\d{1,9})\.(\d{1,9})(?:\.(\d{1,9}))?(?!\d)/.exec(release);
  if (!m || release.includes("\n")) return unparsable(`not a kernel release: ${excerpt(text)}`);
  return parsed({ release, major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3] ?? 0) });
}
