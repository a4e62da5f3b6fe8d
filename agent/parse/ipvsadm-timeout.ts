import { excerpt, parsed, unparsable } from "./result.js";
import type { Result } from "../../common/result.js";

interface IpvsTimeouts {
  tcp: number;
  tcpFin: number;
  udp: number;
}

/** Parses `ipvsadm -L --timeout`: one line, "Timeout (tcp tcpfin udp): 900 120 300" (seconds). */
export function parseIpvsadmTimeout(text: string): Result<IpvsTimeouts> {
  const m = /^Timeout \(tcp tcpfin udp\): (\d{1,10}) (\d{1,10}) (\d{1,10})\n?$/.exec(text);
  if (!m) return unparsable(`not ipvsadm's timeout line: ${excerpt(text)}`);
  return parsed({ tcp: Number(m[1]), tcpFin: Number(m[2]), udp: Number(m[3]) });
}
