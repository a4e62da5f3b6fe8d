import { excerpt, parsed, unparsable } from "./result.js";
import type { Result } from "../../common/result.js";

/** IPVS traffic totals of one network namespace since IPVS was loaded there, as the estimator last summed them. */
interface IpvsStats {
  connections: number;
  incomingPackets: number;
  outgoingPackets: number;
  incomingBytes: number;
  outgoingBytes: number;
}

const HEADER_1 = /^\s*Total\s+Incoming\s+Outgoing\s+Incoming\s+Outgoing\s*$/;
const HEADER_2 = /^\s*Conns\s+Packets\s+Packets\s+Bytes\s+Bytes\s*$/;
const HEX = /^[0-9A-Fa-f]{1,16}$/;

/**
 * /proc/net/ip_vs_stats (net/netfilter/ipvs/ip_vs_ctl.c, ip_vs_stats_show): two header lines, then the
 * totals as five hexadecimal numbers ("%8LX %8LX %8LX %16LX %16LX"), then the rates, which are not read.
 */
export function parseIpvsStats(text: string): Result<IpvsStats> {
  const lines = text.split("\n");
  if (!HEADER_1.test(lines[0] ?? "") || !HEADER_2.test(lines[1] ?? "")) {
    return unparsable(`not /proc/net/ip_vs_stats: first lines ${excerpt(lines.slice(0, 2).join("\\n"))}`);
  }
  const fields = (lines[2] ?? "").trim().split(/\s+/);
  if (fields.length !== 5 || !fields.every((f) => HEX.test(f))) {
    return unparsable(`the totals line is not five hexadecimal numbers: ${excerpt(lines[2] ?? "")}`);
  }
  // Up to 2^64: past 2^53 a byte count loses its last digits, never its size.
  const [connections, incomingPackets, outgoingPackets, incomingBytes, outgoingBytes] = fields.map((f) =>
    Number(BigInt(`0x${f}`)),
  ) as [number, number, number, number, number];
  return parsed({ connections, incomingPackets, outgoingPackets, incomingBytes, outgoingBytes });
}
