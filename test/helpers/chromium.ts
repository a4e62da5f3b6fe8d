import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Debian's Chromium. */
export const CHROMIUM = "/usr/bin/chromium";

/**
 * Headless, touching no network of its own (no QUIC, updates, sync or background fetches), with a new
 * empty profile each time.
 */
export function chromiumFlags(): string[] {
  return [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    `--user-data-dir=${mkdtempSync(join(tmpdir(), "proxyscope-chromium-"))}`,
  ];
}
