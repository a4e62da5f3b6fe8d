import { readdir, readFile, readlink } from "node:fs/promises";
import { basename } from "node:path";
import type { NodeReport } from "../report/schema.js";
import type { Interlock } from "./interlock.js";

/**
 * Who listens on kube-proxy's metrics address. Anything can answer "nftables" on 127.0.0.1:10249 once
 * kube-proxy is stopped (an unprivileged process did, and `cleanup --apply` ran): before changing the
 * node, the listening socket is traced to its process through /proc — its inode among the LISTEN
 * sockets of /proc/net/tcp{,6} on that port, then the process holding that inode among
 * /proc/<pid>/fd — and that process must be root and be kube-proxy by its executable or argv[0].
 */
export interface ListenerOwner {
  pid: number;
  exe: string | null;
  argv0: string | null;
  uid: number | null;
}

export type OwnerResult = { ok: true; owner: ListenerOwner } | { ok: false; reason: string };

const HOW_TO_CONFIRM = (port: number) =>
  `confirm by hand with \`ss -ltnp 'sport = :${port}'\` on the node, or run cleanup where the node's processes are visible (the host's PID namespace, e.g. \`kubectl debug node/NAME --profile=sysadmin\`)`;

/** LISTEN sockets (state 0A) on `port`, as inode numbers, from /proc/net/tcp and tcp6. */
export async function listeningInodes(procRoot: string, port: number): Promise<string[] | null> {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  const out: string[] = [];
  let read = 0;
  for (const f of ["tcp", "tcp6"]) {
    let text: string;
    try {
      text = await readFile(`${procRoot}/net/${f}`, "utf8");
      read++;
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const c = line.trim().split(/\s+/);
      if (c.length < 10 || c[3] !== "0A") continue;
      if (c[1]?.split(":")[1] === hexPort && c[9] !== "0") out.push(c[9]!);
    }
  }
  return read === 0 ? null : out;
}

/** The process (the first one found) holding one of these socket inodes open. */
export async function socketHolder(procRoot: string, inodes: readonly string[]): Promise<number | null> {
  const wanted = new Set(inodes.map((i) => `socket:[${i}]`));
  let pids: string[];
  try {
    pids = (await readdir(procRoot)).filter((d) => /^\d+$/.test(d));
  } catch {
    return null;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = await readdir(`${procRoot}/${pid}/fd`);
    } catch {
      continue; // gone, or not ours to read
    }
    for (const fd of fds) {
      const link = await readlink(`${procRoot}/${pid}/fd/${fd}`).catch(() => null);
      if (link !== null && wanted.has(link)) return Number(pid);
    }
  }
  return null;
}

async function describe(procRoot: string, pid: number): Promise<ListenerOwner> {
  const exe = await readlink(`${procRoot}/${pid}/exe`).catch(() => null);
  const cmdline = await readFile(`${procRoot}/${pid}/cmdline`, "utf8").catch(() => null);
  const status = await readFile(`${procRoot}/${pid}/status`, "utf8").catch(() => "");
  const uid = /^Uid:\s+(\d+)\s+(\d+)/m.exec(status);
  return {
    pid,
    exe: exe === null ? null : exe.replace(/ \(deleted\)$/, ""),
    argv0: cmdline === null ? null : (cmdline.split("\0")[0] ?? null),
    // The effective uid: what the process can do.
    uid: uid ? Number(uid[2]) : null,
  };
}

const quote = (s: string | null) => (s === null ? "unreadable" : JSON.stringify(s.slice(0, 200)));

/** The owner of the listener on `port`, or why it cannot be told. */
export async function listenerOwner(procRoot: string, port: number): Promise<OwnerResult> {
  const inodes = await listeningInodes(procRoot, port);
  if (inodes === null)
    return { ok: false, reason: `${procRoot}/net/tcp and tcp6 could not be read; ${HOW_TO_CONFIRM(port)}` };
  if (inodes.length === 0)
    return { ok: false, reason: `nothing listens on port ${port} now; ${HOW_TO_CONFIRM(port)}` };
  const pid = await socketHolder(procRoot, inodes);
  if (pid === null)
    return {
      ok: false,
      reason: `no process this agent can see holds the socket listening on port ${port} (without the host's PID namespace the agent sees only its own container's processes); ${HOW_TO_CONFIRM(port)}`,
    };
  return { ok: true, owner: await describe(procRoot, pid) };
}

const isKubeProxy = (o: ListenerOwner) =>
  (o.exe !== null && basename(o.exe) === "kube-proxy") ||
  (o.argv0 !== null && basename(o.argv0) === "kube-proxy");

/**
 * The second half of the interlock, after /proxyMode said nftables: the listener is kube-proxy's (a
 * root process named kube-proxy) and kube-proxy's other endpoints agree (/configz says nftables,
 * /healthz answered in kube-proxy's format). Anything unknown refuses.
 */
export async function kubeProxyVerified(
  report: NodeReport,
  opts: { procRoot: string; metricsUrl: string },
): Promise<Interlock> {
  let port: number;
  try {
    const u = new URL(opts.metricsUrl);
    port = Number(u.port || (u.protocol === "https:" ? 443 : 80));
  } catch {
    return { ok: false, reason: `kube-proxy's metrics URL ${quote(opts.metricsUrl)} is not a URL` };
  }
  const configMode = report.facts.configz?.mode ?? null;
  if (configMode !== "nftables")
    return {
      ok: false,
      reason: `kube-proxy's /configz ${configMode === null ? "was not read" : `says mode ${quote(configMode)}`}, while /proxyMode said "nftables": the answers disagree, so whoever answered is not trusted. Nothing is changed.`,
    };
  if (report.facts.kubeProxyHealth === null)
    return {
      ok: false,
      reason: `kube-proxy's /healthz did not answer in kube-proxy's format, while /proxyMode said "nftables": nothing is changed until both answer.`,
    };
  const owner = await listenerOwner(opts.procRoot, port);
  if (!owner.ok)
    return {
      ok: false,
      reason: `cannot tell whether kube-proxy is what answers on port ${port}: ${owner.reason}. Nothing is changed.`,
    };
  const o = owner.owner;
  const who = `pid ${o.pid} (executable ${quote(o.exe)}, argv[0] ${quote(o.argv0)}, uid ${o.uid ?? "unreadable"})`;
  if (!isKubeProxy(o))
    return {
      ok: false,
      reason: `the process listening on port ${port} is not kube-proxy: ${who}. Stop it, or confirm by hand (\`ss -ltnp 'sport = :${port}'\`); nothing is changed.`,
    };
  if (o.uid !== 0)
    return {
      ok: false,
      reason: `the process named kube-proxy listening on port ${port} does not run as root, as kube-proxy must: ${who}. Nothing is changed.`,
    };
  return { ok: true };
}
