import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const ELD_PRELOAD = fileURLToPath(new URL("../node/eld-preload.js", import.meta.url));
const MEM_PRELOAD = fileURLToPath(new URL("../node/mem-preload.js", import.meta.url));

/**
 * The built agent as a DaemonSet runs it: `serve` on loopback with its defaults and quiet logs, `extra`
 * after; with `eldOut`, the event-loop monitor preloaded and writing its samples there; with `memOut`,
 * each thread's heap (bench/node/mem-preload.ts) there.
 */
export function spawnAgentServe(
  cli: string,
  port: number,
  extra: readonly string[],
  eldOut?: string,
  memOut?: string,
): ChildProcess {
  return spawn(
    process.execPath,
    [
      ...(eldOut ? ["--import", ELD_PRELOAD] : []),
      ...(memOut ? ["--import", MEM_PRELOAD] : []),
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
      env: {
        ...process.env,
        ...(eldOut ? { PXBENCH_ELD_OUT: eldOut } : {}),
        ...(memOut ? { PXBENCH_MEM_OUT: memOut, PXBENCH_MEM_MS: "2000" } : {}),
      },
    },
  );
}

/** proxyscope_scans_total from a /metrics body; NaN when absent. */
export const scansTotal = (metrics: string) =>
  Number(/^proxyscope_scans_total (\S+)/m.exec(metrics)?.[1] ?? "NaN");
