import { z } from "zod";

// Every way a probe can fail, named, so a failure is never mistaken for an empty or zero reading.
export const ProbeErrorKind = z.enum([
  "missing-tool", // the program is not installed where we look
  "not-permitted", // EPERM/EACCES, or the tool said so (missing NET_ADMIN, read-only /proc)
  "timeout", // killed after its deadline
  "exit-status", // exited non-zero where zero was expected
  "output-cap", // printed more than we are willing to read
  "exec-failed", // could not be started or died by a signal
  "garbage", // answered, but not in a format we understand
  "io", // a file could not be read
  "unreachable", // an HTTP endpoint refused or did not connect
  "http-status", // an HTTP endpoint answered with an unexpected status
]);
export type ProbeErrorKind = z.infer<typeof ProbeErrorKind>;

export const ProbeError = z.object({
  kind: ProbeErrorKind,
  message: z.string(),
  /** The exact command, file or URL that failed, so the user can rerun it by hand. */
  command: z.string().optional(),
});
export type ProbeError = z.infer<typeof ProbeError>;
