/** The named failures a GET can end in: a subset of the agent's ProbeError kinds, so it passes as one. */
export interface HttpError {
  kind: "timeout" | "output-cap" | "unreachable";
  message: string;
  /** The URL, so the user can fetch it by hand. */
  command: string;
}

/** Where a caller counts the bytes it holds (the collector's gather-wide budget); may make a read wait. */
export interface BytesHeld {
  add(n: number, signal: AbortSignal): Promise<boolean>;
  waitedMs: number;
}

export type HttpResult =
  | { ok: true; status: number; body: string; contentType: string | null; durationMs: number }
  | { ok: false; error: HttpError };

/**
 * GET with a deadline covering connect, headers and body, and a cap on the body. Redirects are not
 * followed: an endpoint we were configured to read must answer itself. Never throws.
 */
export async function httpGet(
  url: string,
  opts: { timeoutMs: number; maxBytes: number; hold?: BytesHeld },
): Promise<HttpResult> {
  const started = performance.now();
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), opts.timeoutMs);
  try {
    const res = await fetch(url, { signal: ctrl.signal, redirect: "manual", headers: { accept: "*/*" } });
    const reader = res.body?.getReader();
    const chunks: Uint8Array[] = [];
    let total = 0;
    if (reader) {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        total += value.byteLength;
        if (total > opts.maxBytes) {
          await reader.cancel();
          return {
            ok: false,
            error: {
              kind: "output-cap",
              message: `${url} answered more than ${opts.maxBytes} bytes`,
              command: url,
            },
          };
        }
        // Waiting here stops reading: the sender is held back by TCP, not buffered by us.
        if (opts.hold && !(await opts.hold.add(value.byteLength, ctrl.signal))) {
          await reader.cancel().catch(() => undefined);
          throw new Error("aborted while waiting for the memory budget");
        }
        chunks.push(value);
      }
    }
    const body = Buffer.concat(chunks).toString("utf8");
    return {
      ok: true,
      status: res.status,
      body,
      contentType: res.headers.get("content-type"),
      durationMs: performance.now() - started,
    };
  } catch (e) {
    if (ctrl.signal.aborted) {
      return {
        ok: false,
        error: {
          kind: "timeout",
          message: `${url} did not answer within ${opts.timeoutMs} ms${
            opts.hold && opts.hold.waitedMs >= 1
              ? ` (${Math.round(opts.hold.waitedMs)} ms of it waiting for room in the memory budget for answers)`
              : ""
          }`,
          command: url,
        },
      };
    }
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    return {
      ok: false,
      error: {
        kind: "unreachable",
        message: `${url}: ${cause?.code ?? cause?.message ?? (e as Error).message}`,
        command: url,
      },
    };
  } finally {
    clearTimeout(timer);
  }
}
