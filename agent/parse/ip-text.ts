// IP addresses as text, the way iproute2 and ipvsadm print them (glibc inet_ntop), so that an
// address read from /proc/net/ip_vs compares equal to the same address from `ip -j addr`.

/** "0A600001" (as /proc/net/ip_vs prints an IPv4 address) -> "10.96.0.1"; null if not 8 hex digits. */
export function ipv4FromHex(hex: string): string | null {
  if (!/^[0-9A-Fa-f]{8}$/.test(hex)) return null;
  const n = parseInt(hex, 16);
  return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

/** Eight 16-bit groups -> compressed text, exactly as glibc's inet_ntop(AF_INET6) writes it. */
export function formatIPv6(groups: readonly number[]): string {
  // The longest run of zero groups (the first one on a tie) becomes "::", if it is 2 groups or more.
  let bestBase = -1;
  let bestLen = 0;
  let curBase = -1;
  let curLen = 0;
  for (let i = 0; i < 8; i++) {
    if (groups[i] === 0) {
      if (curBase < 0) {
        curBase = i;
        curLen = 1;
      } else curLen++;
      if (curLen > bestLen) {
        bestBase = curBase;
        bestLen = curLen;
      }
    } else curBase = -1;
  }
  if (bestLen < 2) bestBase = -1;
  let out = "";
  for (let i = 0; i < 8; i++) {
    if (bestBase >= 0 && i >= bestBase && i < bestBase + bestLen) {
      if (i === bestBase) out += ":";
      continue;
    }
    if (i !== 0) out += ":";
    // An IPv4-compatible (::a.b.c.d) or IPv4-mapped (::ffff:a.b.c.d) address keeps its dotted tail.
    if (i === 6 && bestBase === 0 && (bestLen === 6 || (bestLen === 5 && groups[5] === 0xffff))) {
      const [g6, g7] = [groups[6]!, groups[7]!];
      out += `${g6 >>> 8}.${g6 & 255}.${g7 >>> 8}.${g7 & 255}`;
      break;
    }
    out += groups[i]!.toString(16);
  }
  if (bestBase >= 0 && bestBase + bestLen === 8) out += ":";
  return out;
}

/**
 * The uncompressed form /proc/net/ip_vs prints inside brackets ("fd00:0010:0096:0000:0000:0000:0000:0001")
 * -> "fd00:10:96::1"; null if it is not eight groups of four hex digits.
 */
export function ipv6FromFullText(text: string): string | null {
  if (!/^[0-9A-Fa-f]{4}(?::[0-9A-Fa-f]{4}){7}$/.test(text)) return null;
  return formatIPv6(text.split(":").map((g) => parseInt(g, 16)));
}

/** Any IPv4 or IPv6 text form -> the canonical one; null if it is not an address. */
export function canonicalIp(text: string): string | null {
  if (/^\d{1,3}(?:\.\d{1,3}){3}$/.test(text)) {
    const parts = text.split(".").map(Number);
    return parts.every((p) => p <= 255) ? parts.join(".") : null;
  }
  const groups = parseIPv6(text);
  return groups === null ? null : formatIPv6(groups);
}

function parseIPv6(text: string): number[] | null {
  if (!/^[0-9A-Fa-f:.]+$/.test(text)) return null;
  let tail: number[] = [];
  let body = text;
  const dotted = /^(.*:)(\d{1,3}(?:\.\d{1,3}){3})$/.exec(text);
  if (dotted) {
    const v4 = dotted[2]!.split(".").map(Number);
    if (v4.some((p) => p > 255)) return null;
    tail = [(v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!];
    body = dotted[1]!.endsWith("::") ? dotted[1]! : dotted[1]!.slice(0, -1);
  }
  const halves = body.split("::");
  if (halves.length > 2) return null;
  const groupsOf = (s: string): number[] | null => {
    if (s === "") return [];
    const gs = s.split(":");
    if (gs.some((g) => !/^[0-9A-Fa-f]{1,4}$/.test(g))) return null;
    return gs.map((g) => parseInt(g, 16));
  };
  const head = groupsOf(halves[0]!);
  if (head === null) return null;
  if (halves.length === 1) {
    const all = [...head, ...tail];
    return all.length === 8 ? all : null;
  }
  const rest = groupsOf(halves[1]!);
  if (rest === null) return null;
  const missing = 8 - head.length - rest.length - tail.length;
  if (missing < 1) return null;
  return [...head, ...new Array<number>(missing).fill(0), ...rest, ...tail];
}
