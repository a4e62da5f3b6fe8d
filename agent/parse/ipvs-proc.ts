import type { RealServer, VirtualServer } from "../facts/ipvs.js";
import { canonicalIp, ipv4FromHex, ipv6FromFullText } from "./ip-text.js";
import { excerpt, parsed, unparsable } from "./result.js";
import type { Result } from "../../common/result.js";

// /proc/net/ip_vs, as the kernel's ip_vs_info_seq_show() prints it (checked against 6.1):
//
//   IP Virtual Server version 1.2.1 (size=4096)
//   Prot LocalAddress:Port Scheduler Flags
//     -> RemoteAddress:Port Forward Weight ActiveConn InActConn
//   TCP  0A600001:01BB rr
//     -> AC120002:192B      Masq    1      0          0
//   UDP  0A600028:1388 wrr ops
//   TCP  [fd00:0010:0096:0000:0000:0000:0000:0001]:01BB rr
//   TCP  0A60001E:0050 sh  persistent 60000 FFFFFFFF
//   FWM  00000001 rr
//
// IPv4 addresses and all ports are upper-case hex, IPv6 addresses uncompressed in brackets, the
// persistence timeout is in jiffies. 10,000 Services with 10 endpoints each make 121k lines (7 MB),
// so the parser takes one line at a time and keeps a summary per virtual server, not its real servers.

type VirtualServerKey =
  { protocol: "TCP" | "UDP" | "SCTP"; address: string; port: number } | { protocol: "FWM"; fwmark: number };

export interface IpvsProcOptions {
  /** Keep the real servers of this one virtual server (a per-Service audit); all others are only counted. */
  keepRealServersOf?: VirtualServerKey;
  /** Note every virtual server's forwarding methods (cleanup: kube-proxy only masquerades). */
  collectForwards?: boolean;
  /** Keep every virtual server's real servers (the parity snapshot). */
  collectRealServers?: boolean;
}

export interface IpvsProcTable {
  /** "1.2.1" from the first line. */
  version: string;
  /** The connection hash table size from the first line (size=4096). */
  connTableSize: number;
  virtualServers: VirtualServer[];
  realServerCount: number;
  /** Virtual servers by scheduler name. */
  schedulers: Record<string, number>;
  /** The real servers of `keepRealServersOf`; null when not asked for or no such virtual server. */
  keptRealServers: RealServer[] | null;
  /** With `collectForwards`: forwarding methods by `vsKey`, e.g. "TCP 10.96.0.1:443" -> ["Masq"]. */
  forwards?: Map<string, string[]>;
  /** With `collectRealServers`: each virtual server's real servers. */
  realServers?: Map<VirtualServer, RealServer[]>;
}

/** The key of `forwards`: "TCP 10.96.0.1:443", "UDP [fd00::a]:53", "FWM 1". */
export function vsKey(v: Pick<VirtualServer, "protocol" | "address" | "port" | "fwmark" | "family">): string {
  if (v.protocol === "FWM" || v.address === null) return `FWM ${v.fwmark}`;
  return `${v.protocol} ${v.family === "inet6" ? `[${v.address}]` : v.address}:${v.port}`;
}

const HEADER_1 = /^IP Virtual Server version (\d+\.\d+\.\d+) \(size=(\d{1,10})\)$/;
const HEADER_2 = "Prot LocalAddress:Port Scheduler Flags";
const HEADER_3 = "  -> RemoteAddress:Port Forward Weight ActiveConn InActConn";
const SERVICE =
  /^(TCP|UDP|SCTP) {2}(?:([0-9A-Fa-f]{8})|\[([0-9A-Fa-f:]{39})\]):([0-9A-Fa-f]{4}) (\S+) ?(.*)$/;
const FWM = /^FWM {2}([0-9A-Fa-f]{8}) (\S+) ?(.*)$/;
const DEST =
  /^ {2}-> (?:([0-9A-Fa-f]{8})|\[([0-9A-Fa-f:]{39})\]):([0-9A-Fa-f]{4}) +(\S+) +(\d{1,10}) +(\d{1,10}) +(\d{1,10}) *$/;

/**
 * Incremental parser: feed it every line (without its newline) with `push`, then call `finish`.
 * It never throws; the first line it cannot read makes `finish` return an error naming that line.
 */
export class IpvsProcParser {
  private lineNo = 0;
  private error: string | null = null;
  private version = "";
  private connTableSize = 0;
  private readonly virtualServers: VirtualServer[] = [];
  private readonly schedulers: Record<string, number> = {};
  private realServerCount = 0;
  private current: VirtualServer | null = null;
  private keepingCurrent = false;
  private kept: RealServer[] | null = null;
  private sawBlank = false;
  private readonly want: VirtualServerKey | null;
  private readonly forwards: Map<VirtualServer, Set<string>> | null;
  private readonly reals: Map<VirtualServer, RealServer[]> | null;

  constructor(opts: IpvsProcOptions = {}) {
    this.reals = opts.collectRealServers ? new Map() : null;
    this.forwards = opts.collectForwards ? new Map() : null;
    const k = opts.keepRealServersOf;
    if (k === undefined) this.want = null;
    else if (k.protocol === "FWM") this.want = k;
    else this.want = { ...k, address: canonicalIp(k.address) ?? k.address };
  }

  push(line: string): void {
    if (this.error !== null) return;
    this.lineNo++;
    if (this.lineNo === 1) {
      const m = HEADER_1.exec(line);
      if (!m) return this.fail(line, "not the IPVS table header");
      this.version = m[1]!;
      this.connTableSize = Number(m[2]);
      return;
    }
    if (this.lineNo === 2 || this.lineNo === 3) {
      if (line.trimEnd() !== (this.lineNo === 2 ? HEADER_2 : HEADER_3)) {
        return this.fail(line, "not the IPVS table header");
      }
      return;
    }
    if (line === "") {
      this.sawBlank = true; // only allowed at the very end
      return;
    }
    if (this.sawBlank) return this.fail(line, "text after a blank line");
    if (line.startsWith("  -> ")) return this.dest(line);
    this.service(line);
  }

  finish(): Result<IpvsProcTable> {
    if (this.error !== null) return unparsable(this.error);
    if (this.lineNo < 3) {
      return unparsable(
        this.lineNo === 0 ? "empty /proc/net/ip_vs" : "/proc/net/ip_vs ends inside its header",
      );
    }
    return parsed({
      version: this.version,
      connTableSize: this.connTableSize,
      virtualServers: this.virtualServers,
      realServerCount: this.realServerCount,
      schedulers: this.schedulers,
      keptRealServers: this.kept,
      ...(this.forwards !== null
        ? {
            forwards: new Map(
              this.virtualServers.map((v) => [vsKey(v), [...(this.forwards!.get(v) ?? [])].sort()]),
            ),
          }
        : {}),
      ...(this.reals !== null ? { realServers: this.reals } : {}),
    });
  }

  private fail(line: string, why: string): void {
    this.error = `/proc/net/ip_vs line ${this.lineNo}: ${why}: ${excerpt(line)}`;
  }

  private service(line: string): void {
    let vs: VirtualServer;
    let rest: string;
    const m = SERVICE.exec(line);
    if (m) {
      const v4 = m[2];
      const address = v4 !== undefined ? ipv4FromHex(v4) : ipv6FromFullText(m[3]!);
      if (address === null) return this.fail(line, "bad address");
      vs = this.newVirtualServer(m[1] as "TCP" | "UDP" | "SCTP", m[5]!);
      vs.family = v4 !== undefined ? "inet" : "inet6";
      vs.address = address;
      vs.port = parseInt(m[4]!, 16);
      rest = m[6]!;
    } else {
      const f = FWM.exec(line);
      if (!f) return this.fail(line, "neither a virtual server nor a real server");
      vs = this.newVirtualServer("FWM", f[2]!);
      vs.fwmark = parseInt(f[1]!, 16);
      rest = f[3]!;
    }
    const words = rest.split(" ").filter((w) => w !== "");
    for (let i = 0; i < words.length; i++) {
      const w = words[i]!;
      if (w === "persistent") {
        // "persistent <timeout in jiffies> <netmask in hex>"
        const timeout = words[i + 1];
        if (
          timeout === undefined ||
          !/^\d{1,10}$/.test(timeout) ||
          !/^[0-9A-Fa-f]+$/.test(words[i + 2] ?? "")
        ) {
          return this.fail(line, "persistent without its timeout and netmask");
        }
        vs.persistentTimeoutJiffies = Number(timeout);
        i += 2;
      }
      vs.flags.push(w);
    }
    this.virtualServers.push(vs);
    this.schedulers[vs.scheduler] = (this.schedulers[vs.scheduler] ?? 0) + 1;
    this.current = vs;
    this.keepingCurrent = this.matches(vs);
    if (this.keepingCurrent) this.kept = [];
  }

  private newVirtualServer(protocol: VirtualServer["protocol"], scheduler: string): VirtualServer {
    return {
      protocol,
      family: null,
      address: null,
      port: null,
      fwmark: null,
      scheduler,
      flags: [],
      persistentTimeoutJiffies: null,
      realServers: 0,
      activeConns: 0,
      inactiveConns: 0,
    };
  }

  private dest(line: string): void {
    const vs = this.current;
    if (vs === null) return this.fail(line, "a real server before any virtual server");
    const m = DEST.exec(line);
    if (!m) return this.fail(line, "not a real server line");
    const family = m[1] !== undefined ? "inet" : "inet6";
    const active = Number(m[6]);
    const inactive = Number(m[7]);
    vs.realServers++;
    vs.activeConns += active;
    vs.inactiveConns += inactive;
    if (vs.family === null) vs.family = family; // a firewall-mark service learns it from its servers
    this.realServerCount++;
    if (this.forwards !== null) {
      const set = this.forwards.get(vs) ?? new Set<string>();
      set.add(m[4]!);
      this.forwards.set(vs, set);
    }
    if (this.keepingCurrent || this.reals !== null) {
      const address = family === "inet" ? ipv4FromHex(m[1]!) : ipv6FromFullText(m[2]!);
      if (address === null) return this.fail(line, "bad address");
      const rs: RealServer = {
        family,
        address,
        port: parseInt(m[3]!, 16),
        forward: m[4]!,
        weight: Number(m[5]),
        activeConns: active,
        inactiveConns: inactive,
      };
      if (this.reals !== null) {
        const list = this.reals.get(vs);
        if (list) list.push(rs);
        else this.reals.set(vs, [rs]);
      }
      if (this.keepingCurrent) this.kept!.push(rs);
    }
  }

  private matches(vs: VirtualServer): boolean {
    const w = this.want;
    if (w === null || w.protocol !== vs.protocol) return false;
    if (w.protocol === "FWM") return vs.fwmark === w.fwmark;
    return vs.address === w.address && vs.port === w.port;
  }
}

/** Parses a whole /proc/net/ip_vs text (tests, small tables); the probe streams it instead. */
export function parseIpvsProc(text: string, opts: IpvsProcOptions = {}): Result<IpvsProcTable> {
  const p = new IpvsProcParser(opts);
  const lines = text.split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  for (const line of lines) p.push(line);
  return p.finish();
}
