import { readdir, readlink } from "node:fs/promises";
import type { ProbeError } from "../facts/probe-error.js";
import { ProcNetTcpParser, type ListeningSocket } from "../parse/proc-net.js";
import type { CountFlows } from "./conntrack-flows.js";
import { readLines } from "../../common/regular-file.js";

// 150 bytes a socket (tcp6): this bounds a runaway file, not a busy node (a million sockets is 150 MB).
const PROC_NET_TCP_MAX_BYTES = 256 * 1024 * 1024;

// The node's TCP listeners and who holds them, read from /proc the way `ss -ltnp` does: the LISTEN
// sockets of /proc/net/tcp{,6}, then the processes holding a socket's inode among /proc/<pid>/fd.
// The one reader for the listeners probe and the cleanup interlock (agent/cleanup/listener-owner.ts).

type Read<T> = { ok: true; value: T } | { ok: false; error: ProbeError };

/** Every LISTEN socket of both tables; a table that cannot be read or parsed fails the read. */
export async function listeningSockets(procRoot: string): Promise<Read<ListeningSocket[]>> {
  const out: ListeningSocket[] = [];
  for (const [file, family] of [
    ["tcp", "inet"],
    ["tcp6", "inet6"],
  ] as const) {
    const path = `${procRoot}/net/${file}`;
    const parser = new ProcNetTcpParser(family);
    const r = await readLines(path, (line) => parser.push(line), PROC_NET_TCP_MAX_BYTES);
    if (!r.ok) {
      // No IPv6 in the kernel: no tcp6 table, nothing listens there.
      if (r.missing && file === "tcp6") continue;
      return { ok: false, error: r.error };
    }
    const p = parser.finish();
    if (!p.ok)
      return { ok: false, error: { kind: "garbage", message: `${path}: ${p.error}`, command: path } };
    out.push(...p.value);
  }
  return { ok: true, value: out };
}

/** The socket inodes each visible process holds open (a forked child shares its parent's sockets). */
interface SocketsByProcess {
  held: Map<number, Set<string>>;
  /** Processes listed under procRoot, and how many of them had fds this agent could not read. */
  visible: number;
  unreadable: number;
}

/**
 * The socket inodes every process under procRoot holds, from its /proc/<pid>/fd links ("socket:[N]").
 * Without the host's PID namespace, or without CAP_SYS_PTRACE, other processes' fds are not readable:
 * counted in `unreadable`, so a socket nobody is seen to hold is "not traced", never "nobody's".
 */
export async function socketsByProcess(
  procRoot: string,
): Promise<{ ok: true; value: SocketsByProcess } | { ok: false; why: string }> {
  let pids: string[];
  try {
    pids = (await readdir(procRoot)).filter((d) => /^\d+$/.test(d));
  } catch (e) {
    return { ok: false, why: `${procRoot} could not be listed: ${(e as Error).message}` };
  }
  const held = new Map<number, Set<string>>();
  let unreadable = 0;
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = await readdir(`${procRoot}/${pid}/fd`);
    } catch {
      unreadable++;
      continue; // gone, or not ours to read
    }
    const links = await Promise.all(
      fds.map((fd) => readlink(`${procRoot}/${pid}/fd/${fd}`).catch(() => null)),
    );
    const sockets = new Set(
      links.flatMap((l) => (l !== null && /^socket:\[\d+\]$/.test(l) ? [l.slice(8, -1)] : [])),
    );
    if (sockets.size > 0) held.set(Number(pid), sockets);
  }
  return { ok: true, value: { held, visible: pids.length, unreadable } };
}

/** The processes holding socket `inode`, lowest pid first. */
export const holdersOf = (s: SocketsByProcess, inode: string): number[] =>
  [...s.held].flatMap(([pid, set]) => (set.has(inode) ? [pid] : [])).sort((a, b) => a - b);

/**
 * Conntrack entries whose original destination port is one of `ports`, counted by destination address
 * and port through `count` (the scan's one nf_conntrack pass, or a read of its own), so over the cap,
 * missing (no nf_conntrack procfs), unreadable or garbled is a failure, never a count.
 */
export async function conntrackTo(
  ports: ReadonlySet<number>,
  count: CountFlows,
): Promise<Read<Map<string, { address: string; port: number; connections: number }>>> {
  const r = await count((f) =>
    f.proto === "tcp" && f.dport !== null && ports.has(f.dport) ? `${f.dst}|${f.dport}` : null,
  );
  if (!r.ok) return r;
  const out = new Map<string, { address: string; port: number; connections: number }>();
  for (const [key, connections] of r.value) {
    const at = key.lastIndexOf("|");
    out.set(key, { address: key.slice(0, at), port: Number(key.slice(at + 1)), connections });
  }
  return { ok: true, value: out };
}
