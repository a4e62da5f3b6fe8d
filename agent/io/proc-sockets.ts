import { readdir, readlink } from "node:fs/promises";
import type { ProbeError } from "../facts/probe-error.js";
import { parseConntrackLine, parseProcNetTcp, type ListeningSocket } from "../parse/proc-net.js";
import { readLines, readTextFile } from "./files.js";

// The node's TCP listeners and who holds them, read from /proc the way `ss -ltnp` does: the LISTEN
// sockets of /proc/net/tcp{,6}, then the process holding a socket's inode among /proc/<pid>/fd.
// (agent/cleanup/listener-owner.ts does the same for the cleanup interlock; this is the scan's copy,
// with typed failures, so a probe does not import cleanup.)

export type Read<T> = { ok: true; value: T } | { ok: false; error: ProbeError };

/** Every LISTEN socket of both tables; a table that cannot be read or parsed fails the read. */
export async function listeningSockets(procRoot: string): Promise<Read<ListeningSocket[]>> {
  const out: ListeningSocket[] = [];
  for (const [file, family] of [
    ["tcp", "inet"],
    ["tcp6", "inet6"],
  ] as const) {
    const path = `${procRoot}/net/${file}`;
    const r = await readTextFile(path, 64 * 1024 * 1024);
    if (!r.ok) {
      // No IPv6 in the kernel: no tcp6 table, nothing listens there.
      if (r.missing && file === "tcp6") continue;
      return { ok: false, error: r.error };
    }
    const p = parseProcNetTcp(r.text, family);
    if (!p.ok) return { ok: false, error: { kind: "garbage", message: p.error, command: path } };
    out.push(...p.value);
  }
  return { ok: true, value: out };
}

/**
 * The process holding socket `inode`, and every socket inode it holds; or why it cannot be told
 * (without the host's PID namespace, or without CAP_SYS_PTRACE, another process's fds are not readable).
 */
export async function socketHolder(
  procRoot: string,
  inode: string,
): Promise<{ ok: true; pid: number; sockets: Set<string> } | { ok: false; why: string }> {
  const wanted = `socket:[${inode}]`;
  let pids: string[];
  try {
    pids = (await readdir(procRoot)).filter((d) => /^\d+$/.test(d));
  } catch (e) {
    return { ok: false, why: `${procRoot} could not be listed: ${(e as Error).message}` };
  }
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
    if (links.includes(wanted)) {
      const sockets = new Set(
        links.flatMap((l) => (l !== null && l.startsWith("socket:[") ? [l.slice(8, -1)] : [])),
      );
      return { ok: true, pid: Number(pid), sockets };
    }
  }
  return {
    ok: false,
    why: `no process this agent can see holds socket ${inode} (${pids.length} processes visible, ${unreadable} of them unreadable; the DaemonSet runs without the host's PID namespace)`,
  };
}

/**
 * Conntrack entries whose original destination port is one of `ports`, counted by destination address
 * and port, streamed from /proc/net/nf_conntrack with a byte cap: over the cap, missing (no
 * nf_conntrack procfs) or unreadable is a failure, never a count.
 */
export async function conntrackTo(
  procRoot: string,
  ports: ReadonlySet<number>,
  maxBytes: number,
): Promise<Read<Map<string, { address: string; port: number; connections: number }>>> {
  const counts = new Map<string, { address: string; port: number; connections: number }>();
  const path = `${procRoot}/net/nf_conntrack`;
  const r = await readLines(
    path,
    (line) => {
      const e = parseConntrackLine(line);
      if (e === null || e.proto !== "tcp" || !ports.has(e.dport)) return;
      const key = `${e.dst}|${e.dport}`;
      const c = counts.get(key) ?? { address: e.dst, port: e.dport, connections: 0 };
      c.connections++;
      counts.set(key, c);
    },
    maxBytes,
  );
  return r.ok ? { ok: true, value: counts } : { ok: false, error: r.error };
}
