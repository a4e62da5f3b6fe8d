import { isIP } from "node:net";
import { z } from "zod";
import { hasControl } from "./escape.js";
import { hasUserinfo } from "./redact.js";

/** Node's timers take at most a signed 32-bit millisecond count; a longer one silently becomes 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;
/** The longest interval or window in seconds that still fits one timer. */
export const MAX_TIMER_S = Math.floor(MAX_TIMER_MS / 1000);

// Flags and environment are strings: only plain decimal digits count as numbers ("0x50", "1e3",
// " 80", "1.5" are refused rather than read as something the user did not type). A minus sign is read,
// so that "-1" is told it is out of range rather than that it is not a number. Every number flag of
// both programs (counts, ports, durations in ms or s) is parsed here, so all refuse the same things.
const digits = z.union([z.number(), z.string()]).transform((v, ctx) => {
  if (typeof v === "number") return v;
  if (/^-?[0-9]+$/.test(v)) return Number(v);
  ctx.addIssue({ code: "custom", message: "must be decimal digits" });
  return z.NEVER;
});

/** A whole number from `min` to `max`, in decimal digits. */
export const count = (min: number, max: number) =>
  digits.pipe(
    z.number().int().min(min, `must be from ${min} to ${max}`).max(max, `must be from ${min} to ${max}`),
  );

/** A millisecond duration from 1 to MAX_TIMER_MS. */
export const durationMs = (max = MAX_TIMER_MS) =>
  digits.pipe(
    z.number().int().min(1, `must be from 1 to ${max} (ms)`).max(max, `must be from 1 to ${max} (ms)`),
  );

/** Whole seconds, from 1 (or from 0 with `zero`) up to `max`, at most MAX_TIMER_S. */
export const durationS = (max = MAX_TIMER_S, zero = false) => {
  const msg = `must be ${zero ? "from 0" : "above 0 and"} ${zero ? "to" : "at most"} ${max} (s)`;
  return digits.pipe(z.number().refine((n) => (zero ? n >= 0 : n > 0) && n <= max, msg));
};

/** A TCP port in decimal digits; `min` 0 where 0 means "any free port". */
export const port = (min: 0 | 1) =>
  digits.pipe(
    z.number().int().min(min, `must be from ${min} to 65535`).max(65535, `must be from ${min} to 65535`),
  );

/** An IP address or a DNS host name; "256.1.1.1" is neither. */
export const listenHost = z
  .string()
  .refine(
    (h) =>
      isIP(h) !== 0 ||
      (!/^[0-9.]+$/.test(h) &&
        h.length <= 253 &&
        /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(
          h,
        )),
    "must be an IP address or a host name",
  );

/**
 * An http(s) base URL the program reads from. No user name or password: fetch refuses to send them
 * (WHATWG Fetch, "Request constructor": a URL that includes credentials throws), so they could only
 * ever be shown. No query or fragment: paths are appended to the base.
 */
export const baseUrl = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//i.test(u), "must be an http(s) URL")
  .refine((u) => !hasUserinfo(u), "must hold no user name or password (they would never be sent)")
  .refine((u) => !/[?#]/.test(u), "must be a base URL, with no query or fragment");

/** A node name as the user gives it: shown on terminals and in reports, so no control characters. */
export const nodeName = z
  .string()
  .min(1)
  .max(253)
  .refine((s) => !hasControl(s), "must not hold control characters");
