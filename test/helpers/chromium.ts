import { mkdtempSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import type { Owner } from "./children.js";

/** Debian's Chromium. */
export const CHROMIUM = "/usr/bin/chromium";

/**
 * Headless, touching no network of its own (no QUIC, updates, sync or background fetches), with a new
 * empty profile each time, removed when `owner` (the test that runs Chromium) ends.
 */
export function chromiumFlags(owner: Owner): string[] {
  const profile = mkdtempSync(join(tmpdir(), "proxyscope-chromium-"));
  owner.teardown(() => {
    // The profile's lock is a socket in a directory of its own in TMPDIR, linked from the profile:
    // a Chromium stopped by its test (SIGTERM to its group) leaves that directory behind.
    try {
      const lockDir = dirname(readlinkSync(join(profile, "SingletonSocket")));
      if (basename(lockDir).startsWith("org.chromium.Chromium.")) {
        rmSync(lockDir, { recursive: true, force: true });
      }
    } catch {
      // no lock: Chromium never got that far, or removed it on its way out
    }
    rmSync(profile, { recursive: true, force: true });
  });
  return [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    `--user-data-dir=${profile}`,
  ];
}
