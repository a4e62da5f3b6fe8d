import { isIP } from "node:net";

interface HostPort {
  host: string;
  port: number;
}

/** "10.96.0.1:443" or "[fd00::1]:443" -> { host, port }; null when it is not an IP address and a port. */
export function parseHostPort(text: string): HostPort | null {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([0-9.]+)):(\d{1,5})$/.exec(text.trim());
  if (!m) return null;
  const host = (m[1] ?? m[2]) as string;
  const port = Number(m[3]);
  if (isIP(host) === 0 || port < 1 || port > 65535) return null;
  return { host, port };
}

export function formatHostPort(a: HostPort): string {
  return isIP(a.host) === 6 ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`;
}

/**
 * The `kubernetes` Service's ClusterIP as Kubernetes injects it into every pod's environment,
 * formatted as HOST:PORT; undefined outside a pod (or when either variable is missing).
 */
export function serviceAddressFromEnv(env: NodeJS.ProcessEnv): string | undefined {
  const host = env.KUBERNETES_SERVICE_HOST?.trim();
  const port = env.KUBERNETES_SERVICE_PORT?.trim();
  if (!host || !port) return undefined;
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}
