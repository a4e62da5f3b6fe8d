import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const ELD_PRELOAD = fileURLToPath(new URL("../node/eld-preload.js", import.meta.url));

/**
 * The built agent as a DaemonSet runs it: `serve` on loopback with its defaults and quiet logs, `extra`
 * after; with `eldOut`, the event-loop monitor preloaded and writing its samples there.
 */
export function spawnAgentServe(
  cli: string,
  port: number,
  extra: readonly string[],
  eldOut?: string,
): ChildProcess {
  return spawn(
    process.execPath,
    [
      ...(eldOut ? ["--import", ELD_PRELOAD] : []),
      cli,
      "serve",
      "--listen",
      "127.0.0.1",
      "--port",
      String(port),
      "--log-level",
      "error",
      "--node",
      "bench-node",
      ...extra,
    ],
    {
      stdio: ["ignore", "ignore", "inherit"],
      env: { ...process.env, ...(eldOut ? { PXBENCH_ELD_OUT: eldOut } : {}) },
    },
  );
}

/** proxyscope_scans_total from a /metrics body; NaN when absent. */
export const scansTotal = (metrics: string) =>
  Number(/^proxyscope_scans_total (\S+)/m.exec(metrics)?.[1] ?? "NaN");
