import type http from "node:http";
import { redactUrls } from "./redact.js";
/** The named failures a GET can end in: a subset of the agent's ProbeError kinds, so it passes as one. */
interface HttpError {
  kind: "timeout" | "output-cap" | "unreachable";
  message: string;
  /** The URL, so the user can fetch it by hand. */
  command: string;
}

/** Where a caller counts the bytes it holds (the collector's gather-wide budget); may make a read wait. */
interface BytesHeld {
  /** The answer's declared length (null: not declared) is known, before its first byte is read. */
  expect?(length: number | null, signal: AbortSignal): Promise<boolean>;
  add(n: number, signal: AbortSignal): Promise<boolean>;
  waitedMs: number;
}

/** A GET with a deadline and a byte cap, by whatever route (directly, or through the API server). */
export type Getter = (
  url: string,
  opts: { timeoutMs: number; maxBytes: number; hold?: BytesHeld },
) => Promise<HttpResult>;

/** How httpGetVia reaches the server: a connection pool carrying TLS material, and headers (credentials). */
export interface Via {
  agent?: http.Agent | undefined;
  headers: Record<string, string>;
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
  return guarded(url, opts, async (signal) => {
    const res = await fetch(url, { signal, redirect: "manual", headers: { accept: "*/*" } });
    const reader = res.body?.getReader();
    async function* chunks() {
      if (!reader) return;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        yield value;
      }
    }
    return {
      status: res.status,
      contentType: res.headers.get("content-type"),
      // fetch decodes a compressed body: then the declared length is not what will be read.
      length: res.headers.has("content-encoding") ? null : declared(res.headers.get("content-length")),
      chunks: chunks(),
      cancel: () => reader?.cancel().catch(() => undefined),
    };
  });
}

/**
 * The same GET over node:http(s) with a given connection pool and headers: what the kubeconfig's
 * credentials need (the client hands them over as an http.Agent and headers, not as fetch options).
 */
export async function httpGetVia(
  url: string,
  via: Via,
  opts: { timeoutMs: number; maxBytes: number; hold?: BytesHeld },
): Promise<HttpResult> {
  return guarded(url, opts, async (signal) => {
    const u = new URL(url);
    // Loaded on first use: importing node:http starts undici, which `schema` and `version` need not.
    const mod = u.protocol === "https:" ? await import("node:https") : await import("node:http");
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = mod.request(
        u,
        { method: "GET", agent: via.agent, headers: { accept: "*/*", ...via.headers }, signal },
        resolve,
      );
      req.once("error", reject);
      req.end();
    });
    const ct = res.headers["content-type"];
    return {
      status: res.statusCode ?? 0,
      contentType: typeof ct === "string" ? ct : null,
      // node:http hands over the body as sent and stops it at the declared length.
      length: declared(res.headers["content-length"] ?? null),
      chunks: res as AsyncIterable<Uint8Array>,
      cancel: () => void res.destroy(),
    };
  });
}

interface Opened {
  status: number;
  contentType: string | null;
  /** Content-Length, when the server declared one. */
  length: number | null;
  chunks: AsyncIterable<Uint8Array>;
  cancel: () => unknown;
}

function declared(v: string | null): number | null {
  if (v === null || !/^\d{1,15}$/.test(v)) return null;
  return Number(v);
}

/** Deadline over connect, headers and body; the byte cap and the budget while reading. Never throws. */
async function guarded(
  url: string,
  opts: { timeoutMs: number; maxBytes: number; hold?: BytesHeld },
  open: (signal: AbortSignal) => Promise<Opened>,
): Promise<HttpResult> {
  const r = await guardedRaw(url, opts, open);
  // Every message names the URL (and fetch's own errors quote it): shown only with its secrets redacted.
  return r.ok
    ? r
    : { ok: false, error: { ...r.error, message: redactUrls(r.error.message), command: redactUrls(url) } };
}

async function guardedRaw(
  url: string,
  opts: { timeoutMs: number; maxBytes: number; hold?: BytesHeld },
  open: (signal: AbortSignal) => Promise<Opened>,
): Promise<HttpResult> {
  const started = performance.now();
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), opts.timeoutMs);
  try {
    const res = await open(ctrl.signal);
    const capped = () => ({
      ok: false as const,
      error: {
        kind: "output-cap" as const,
        message: `${url} answered more than ${opts.maxBytes} bytes`,
        command: url,
      },
    });
    if (res.length !== null && res.length > opts.maxBytes) {
      await res.cancel();
      return capped();
    }
    // Room for the whole answer is taken once, before its first byte: a reader waiting for it holds none.
    if (opts.hold?.expect && !(await opts.hold.expect(res.length, ctrl.signal))) {
      await res.cancel();
      throw new Error("aborted while waiting for the memory budget");
    }
    const chunks: Uint8Array[] = [];
    let total = 0;
    for await (const value of res.chunks) {
      total += value.byteLength;
      if (total > opts.maxBytes) {
        await res.cancel();
        return capped();
      }
      // Waiting here stops reading: the sender is held back by TCP, not buffered by us.
      if (opts.hold && !(await opts.hold.add(value.byteLength, ctrl.signal))) {
        await res.cancel();
        throw new Error("aborted while waiting for the memory budget");
      }
      chunks.push(value);
    }
    const body = Buffer.concat(chunks).toString("utf8");
    return {
      ok: true,
      status: res.status,
      body,
      contentType: res.contentType,
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
    const err = e as { code?: string; cause?: { code?: string; message?: string }; message?: string };
    return {
      ok: false,
      error: {
        kind: "unreachable",
        message: `${url}: ${err.cause?.code ?? err.cause?.message ?? err.code ?? err.message}`,
        command: url,
      },
    };
  } finally {
    clearTimeout(timer);
  }
}
