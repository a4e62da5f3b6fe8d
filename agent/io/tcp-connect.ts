import { connect } from "node:net";

export type ConnectOutcome =
  | { ok: true; localAddress: string | null; durationMs: number }
  | { ok: false; error: string; durationMs: number };

/**
 * Opens one TCP connection and closes it at once: proof that the node's rules carry a packet to a
 * live endpoint and back, which no reading of the rules can give. Never throws.
 */
export function tcpConnect(host: string, port: number, timeoutMs: number): Promise<ConnectOutcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const sock = connect({ host, port });
    const done = (o: ConnectOutcome) => {
      clearTimeout(timer);
      sock.removeAllListeners();
      sock.on("error", () => {});
      sock.destroy();
      resolve(o);
    };
    const timer = setTimeout(
      () =>
        done({
          ok: false,
          error: `no answer within ${timeoutMs} ms`,
          durationMs: performance.now() - started,
        }),
      timeoutMs,
    );
    sock.once("connect", () =>
      done({ ok: true, localAddress: sock.localAddress ?? null, durationMs: performance.now() - started }),
    );
    sock.once("error", (e: NodeJS.ErrnoException) =>
      done({ ok: false, error: e.code ?? e.message, durationMs: performance.now() - started }),
    );
  });
}
