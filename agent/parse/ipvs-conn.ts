import type { IpvsConnectionsFacts, IpvsConnectionsTo } from "../facts/ipvs-connections.js";
import { ipv4FromHex, ipv6FromFullText } from "./ip-text.js";
import { excerpt, parsed, unparsable } from "./result.js";
import type { Result } from "../../common/result.js";

// /proc/net/ip_vs_conn, as the kernel's ip_vs_conn_seq_show() prints it (net/netfilter/ipvs/ip_vs_conn.c,
// checked against the 6.1 guest the fixtures were recorded on):
//
//   Pro FromIP   FPrt ToIP     TPrt DestIP   DPrt State       Expires PEName PEData
//   TCP AC12000A 9C4A 0A608F1E 0050 AC12000A 1F90 ESTABLISHED     899
//   TCP fd00:0018:0000:0000:0000:0000:0000:0010 A1B2 fd00:0010:... 0050 fd00:0018:... 1F90 ESTABLISHED 899
//
// "%-3s %08X %04X %08X %04X %s %04X %-11s %7u%s": IPv4 addresses and ports in upper-case hex, IPv6
// addresses uncompressed (%pI6) without brackets, the destination in the real server's own family,
// then an optional persistence-engine name and data (SIP Call-IDs). A persistence template (ClientIP
// affinity) has client port 0. One line per connection: a busy node has hundreds of thousands, so the
// parser takes one line at a time and keeps only counts per virtual address.

const HEADER = /^Pro FromIP +FPrt ToIP +TPrt DestIP +DPrt State +Expires(?: PEName PEData)?$/;
const PROTOCOLS = new Set(["TCP", "UDP", "SCTP"]);
// TCP and SCTP share the name for a connection in use (ip_vs_proto_tcp.c tcp_state_name_table,
// ip_vs_proto_sctp.c sctp_state_name_table).
const ESTABLISHED = "ESTABLISHED";

function address(text: string): { family: "inet" | "inet6"; address: string } | null {
  if (text.length === 8) {
    const a = ipv4FromHex(text);
    return a === null ? null : { family: "inet", address: a };
  }
  const a = ipv6FromFullText(text);
  return a === null ? null : { family: "inet6", address: a };
}

const PORT = /^[0-9A-Fa-f]{4}$/;

/** Incremental parser: `push` every line (without its newline), then `finish`. Never throws. */
export class IpvsConnParser {
  private lineNo = 0;
  private error: string | null = null;
  private entries = 0;
  private established = 0;
  private templates = 0;
  private readonly states: Record<string, number> = {};
  private readonly to = new Map<string, IpvsConnectionsTo>();

  push(line: string): void {
    if (this.error !== null) return;
    this.lineNo++;
    if (this.lineNo === 1) {
      if (!HEADER.test(line.trimEnd())) this.fail(line, "not the IPVS connection table header");
      return;
    }
    if (line === "") return this.fail(line, "an empty line");
    const w = line.split(" ").filter((x) => x !== "");
    if (w.length < 9) return this.fail(line, "fewer than 9 fields");
    const [proto, , cport, vaddr, vport, , dport, state, expires] = w as [
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    if (!/^[A-Za-z0-9_-]{1,16}$/.test(proto)) return this.fail(line, "bad protocol");
    if (!PORT.test(cport) || !PORT.test(vport) || !PORT.test(dport)) return this.fail(line, "bad port");
    if (!/^\d{1,10}$/.test(expires) || !/^[A-Z0-9_!?]{1,16}$/.test(state)) {
      return this.fail(line, "bad state or expiry");
    }
    const v = address(vaddr);
    if (v === null) return this.fail(line, "bad virtual address");
    this.entries++;
    if (parseInt(cport, 16) === 0) {
      this.templates++; // a template holds a client's affinity, not a connection
      return;
    }
    this.states[state] = (this.states[state] ?? 0) + 1;
    const est = state === ESTABLISHED && (proto === "TCP" || proto === "SCTP");
    if (est) this.established++;
    // ICMP errors and other protocols IPVS tracks are no Service's connection.
    if (!PROTOCOLS.has(proto)) return;
    const port = parseInt(vport, 16);
    const key = `${proto} ${v.family === "inet6" ? `[${v.address}]` : v.address}:${port}`;
    let e = this.to.get(key);
    if (e === undefined) {
      e = {
        protocol: proto as IpvsConnectionsTo["protocol"],
        family: v.family,
        address: v.address,
        port,
        established: 0,
        other: 0,
      };
      this.to.set(key, e);
    }
    if (est) e.established++;
    else e.other++;
  }

  finish(): Result<Omit<IpvsConnectionsFacts, "available">> {
    if (this.error !== null) return unparsable(this.error);
    if (this.lineNo === 0) return unparsable("empty /proc/net/ip_vs_conn");
    const byVirtualAddress = [...this.to.values()].sort(
      (a, b) => b.established - a.established || b.other - a.other,
    );
    return parsed({
      entries: this.entries,
      established: this.established,
      templates: this.templates,
      states: this.states,
      byVirtualAddress,
      virtualAddressCount: byVirtualAddress.length,
    });
  }

  private fail(line: string, why: string): void {
    this.error = `/proc/net/ip_vs_conn line ${this.lineNo}: ${why}: ${excerpt(line)}`;
  }
}

/** Parses a whole /proc/net/ip_vs_conn text (tests); the probe streams it instead. */
export function parseIpvsConn(text: string): Result<Omit<IpvsConnectionsFacts, "available">> {
  const p = new IpvsConnParser();
  const lines = text.split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  for (const line of lines) p.push(line);
  return p.finish();
}
