import { readlink } from "node:fs/promises";
import { basename } from "node:path";
import { httpGet } from "../../common/http.js";
import { readTextFile } from "../../common/regular-file.js";
import { holdersOf, listeningSockets, socketsByProcess } from "../io/proc-sockets.js";
import { parseProxyMode } from "../parse/kube-proxy-mode.js";
import type { ListeningSocket } from "../parse/proc-net.js";
import type { NodeReport } from "../report/schema.js";
import type { Interlock } from "./interlock.js";
import { canonicalIp, covers, hostPort, isWildcard } from "../parse/listen-address.js";

/**
 * Who answered on kube-proxy's metrics URL. Anything can answer "nftables" on 127.0.0.1:10249 (an
 * unprivileged process did, while kube-proxy in ipvs mode listened on the node address), so before
 * the node is changed every LISTEN socket a connection to the URL's address and port may land on
 * (that address, or a wildcard covering it; /proc/net/tcp{,6}) is traced through its inode to every
 * process holding it (/proc/<pid>/fd), and each must be root and be kube-proxy by its executable or
 * argv[0]. Then every other listener a kube-proxy process holds is asked /proxyMode too: a second
 * kube-proxy still in ipvs mode elsewhere on the node refuses as well.
 */
interface ListenerOwner {
  pid: number;
  exe: string | null;
  argv0: string | null;
  uid: number | null;
}

const HOW_TO_CONFIRM = (port: number) =>
  `confirm by hand with \`ss -ltnp 'sport = :${port}'\` on the node, or run cleanup where the node's processes are visible (the host's PID namespace, e.g. \`kubectl debug node/NAME --profile=sysadmin\`)`;

async function describe(procRoot: string, pid: number): Promise<ListenerOwner> {
  const exe = await readlink(`${procRoot}/${pid}/exe`).catch(() => null);
  // Capped: another user's process writes its own argv (fs/proc/base.c proc_pid_cmdline_read).
  const cmdline = await readTextFile(`${procRoot}/${pid}/cmdline`, 1024 * 1024);
  const status = await readTextFile(`${procRoot}/${pid}/status`, 64 * 1024);
  const uid = status.ok ? /^Uid:\s+(\d+)\s+(\d+)/m.exec(status.text) : null;
  return {
    pid,
    exe: exe === null ? null : exe.replace(/ \(deleted\)$/, ""),
    argv0: cmdline.ok ? (cmdline.text.split("\0")[0] ?? null) : null,
    // The effective uid: what the process can do.
    uid: uid ? Number(uid[2]) : null,
  };
}

const quote = (s: string | null) => (s === null ? "unreadable" : JSON.stringify(s.slice(0, 200)));
const who = (o: ListenerOwner) =>
  `pid ${o.pid} (executable ${quote(o.exe)}, argv[0] ${quote(o.argv0)}, uid ${o.uid ?? "unreadable"})`;

const isKubeProxy = (o: ListenerOwner) =>
  (o.exe !== null && basename(o.exe) === "kube-proxy") ||
  (o.argv0 !== null && basename(o.argv0) === "kube-proxy");

const refuse = (reason: string): Interlock => ({ ok: false, reason });

/** The metrics URL's address (canonical) and port, or why it cannot be matched to a socket. */
function urlTarget(metricsUrl: string): { ok: true; host: string; port: number; scheme: string } | Interlock {
  let u: URL;
  try {
    u = new URL(metricsUrl);
  } catch {
    return refuse(`kube-proxy's metrics URL ${quote(metricsUrl)} is not a URL`);
  }
  const port = Number(u.port || (u.protocol === "https:" ? 443 : 80));
  const host = canonicalIp(u.hostname);
  // A connection to a wildcard lands on whichever local listener the kernel picks.
  if (host === "0.0.0.0" || host === "::")
    return refuse(
      `kube-proxy's metrics URL names the wildcard address ${host}, not one kube-proxy can be asked at; give the address kube-proxy binds (e.g. http://127.0.0.1:${port}). Nothing is changed.`,
    );
  // A name may resolve to several addresses, each with its own listener: which one answered is unknown.
  if (host === null)
    return refuse(
      `kube-proxy's metrics URL names the host ${quote(u.hostname)}, not an address, so the socket that answered cannot be told; give the address kube-proxy binds (e.g. http://127.0.0.1:${port}). Nothing is changed.`,
    );
  return { ok: true, host, port, scheme: u.protocol };
}

/**
 * The second half of the interlock, after /proxyMode said nftables: what answered is kube-proxy (every
 * socket on the URL's address and port held only by root processes named kube-proxy), kube-proxy's
 * other endpoints agree (/configz says nftables, /healthz answered in kube-proxy's format), and no
 * kube-proxy listener elsewhere on the node answers another mode. Anything unknown refuses.
 */
export async function kubeProxyVerified(
  report: NodeReport,
  opts: { procRoot: string; metricsUrl: string; timeoutMs: number },
): Promise<Interlock> {
  const target = urlTarget(opts.metricsUrl);
  if (!("host" in target)) return target;
  const { host, port } = target;
  const at = hostPort(host, port);
  const configMode = report.facts.configz?.mode ?? null;
  if (configMode !== "nftables")
    return refuse(
      `kube-proxy's /configz ${configMode === null ? "was not read" : `says mode ${quote(configMode)}`}, while /proxyMode said "nftables": the answers disagree, so whoever answered is not trusted. Nothing is changed.`,
    );
  if (report.facts.kubeProxyHealth === null)
    return refuse(
      `kube-proxy's /healthz did not answer in kube-proxy's format, while /proxyMode said "nftables": nothing is changed until both answer.`,
    );

  const cannotTell = (why: string) =>
    refuse(`cannot tell whether kube-proxy is what answers on ${at}: ${why}. Nothing is changed.`);
  const read = await listeningSockets(opts.procRoot);
  if (!read.ok) return cannotTell(`${read.error.message}; ${HOW_TO_CONFIRM(port)}`);
  const listeners = read.value;
  const atUrl = listeners.filter((l) => l.port === port && covers(l, host));
  if (atUrl.length === 0) return cannotTell(`nothing listens on ${at} now; ${HOW_TO_CONFIRM(port)}`);
  const sockets = await socketsByProcess(opts.procRoot);
  if (!sockets.ok) return cannotTell(`${sockets.why}; ${HOW_TO_CONFIRM(port)}`);
  const holders = (l: ListeningSocket) => holdersOf(sockets.value, l.inode);
  const described = new Map<number, Promise<ListenerOwner>>();
  const owner = (pid: number) => {
    const known = described.get(pid);
    if (known !== undefined) return known;
    const d = describe(opts.procRoot, pid);
    described.set(pid, d);
    return d;
  };

  for (const l of atUrl) {
    const bound = `${hostPort(l.address, l.port)}${isWildcard(l) ? ` (a wildcard, which takes ${host}'s connections)` : ""}`;
    const pids = holders(l);
    if (pids.length === 0)
      return cannotTell(
        `no process this agent can see holds the socket listening on ${bound} (without the host's PID namespace the agent sees only its own container's processes); ${HOW_TO_CONFIRM(port)}`,
      );
    for (const pid of pids) {
      const o = await owner(pid);
      if (!isKubeProxy(o))
        return refuse(
          `the process listening on ${bound} is not kube-proxy: ${who(o)}. Every listener there must be kube-proxy's. Stop it, or confirm by hand (\`ss -ltnp 'sport = :${port}'\`); nothing is changed.`,
        );
      if (o.uid !== 0)
        return refuse(
          `the process named kube-proxy listening on ${bound} does not run as root, as kube-proxy must: ${who(o)}. Nothing is changed.`,
        );
    }
  }
  return otherListenersAgree(listeners, new Set(atUrl), holders, owner, target, opts.timeoutMs);
}

/**
 * Every other listener a process named kube-proxy holds (its health port, or a second kube-proxy bound
 * elsewhere) is asked /proxyMode. A mode other than nftables refuses; so does no answer at all, since
 * that listener may be the one still in ipvs mode. An HTTP error status is not a metrics server.
 */
async function otherListenersAgree(
  listeners: readonly ListeningSocket[],
  atUrl: ReadonlySet<ListeningSocket>,
  holders: (l: ListeningSocket) => number[],
  owner: (pid: number) => Promise<ListenerOwner>,
  target: { host: string; port: number; scheme: string },
  timeoutMs: number,
): Promise<Interlock> {
  const asked = new Set<string>();
  for (const l of listeners) {
    if (atUrl.has(l)) continue;
    let kubeProxy: ListenerOwner | null = null;
    for (const pid of holders(l)) {
      const o = await owner(pid);
      if (isKubeProxy(o)) kubeProxy = o;
    }
    if (kubeProxy === null) continue;
    // A wildcard listener is reached through the loopback address of its family.
    const address = l.address === "0.0.0.0" ? "127.0.0.1" : l.address === "::" ? "::1" : l.address;
    const url = `${target.scheme}//${hostPort(address, l.port)}/proxyMode`;
    if (asked.has(url)) continue;
    asked.add(url);
    const r = await httpGet(url, { timeoutMs, maxBytes: 4096 });
    const from = `kube-proxy (pid ${kubeProxy.pid})`;
    if (!r.ok)
      return refuse(
        `${from} also listens on ${hostPort(l.address, l.port)}, and ${url} did not answer (${r.error.kind}: ${r.error.message}): it may be a kube-proxy still in another mode. Nothing is changed.`,
      );
    if (r.status !== 200) continue;
    const mode = parseProxyMode(r.body);
    if (!mode.ok)
      return refuse(`${from} answers ${url} with something that is not a proxy mode. Nothing is changed.`);
    if (mode.value.mode !== "nftables")
      return refuse(
        `${from} answers ${JSON.stringify(mode.value.mode)} on ${url}, while ${hostPort(target.host, target.port)} answered "nftables": a kube-proxy on this node still runs ${JSON.stringify(mode.value.mode)} mode, and its state is in use. Stop it or switch it to nftables first; nothing is changed.`,
      );
  }
  return { ok: true };
}
