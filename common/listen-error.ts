import { ConfigError } from "./cli.js";

// What the operator can fix about --listen/--port, by errno (getaddrinfo(3) for a host name, bind(2)
// for the address and port). Anything else while listening stays a bug with its stack.
const WHY: Record<string, string> = {
  ENOTFOUND: "no such host",
  EAI_NONAME: "no such host",
  EAI_AGAIN: "the host name could not be resolved now (DNS did not answer)",
  EAI_FAIL: "the host name could not be resolved",
  EADDRNOTAVAIL: "address not available on this machine",
  EADDRINUSE: "port in use",
  EACCES: "permission denied (a port below 1024 needs CAP_NET_BIND_SERVICE)",
  EAFNOSUPPORT: "address family not supported here (IPv6 turned off?)",
};

/** A --listen/--port that cannot be listened on: a usage error (exit 2), said in one line. */
class ListenError extends ConfigError {}

/** The error as one named line, or null when it is not about the address or port. */
export function listenError(e: unknown, host: string, port: number): ListenError | null {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  const why = code === undefined ? undefined : WHY[code];
  return why === undefined
    ? null
    : new ListenError(`cannot listen on --listen ${host} --port ${port}: ${why} (${code})`);
}
