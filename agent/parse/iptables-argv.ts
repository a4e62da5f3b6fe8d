/**
 * Splits one iptables-save rule line into argv the way iptables-restore does ("..." with \" and
 * \\ escapes), so the rule can be handed back to iptables as fixed argv; null on an unclosed quote.
 */
export function splitIptablesRule(rule: string): string[] | null {
  const out: string[] = [];
  let i = 0;
  while (i < rule.length) {
    while (rule[i] === " ") i++;
    if (i >= rule.length) break;
    let tok = "";
    if (rule[i] === '"') {
      i++;
      let closed = false;
      while (i < rule.length) {
        const c = rule[i] as string;
        if (c === "\\" && i + 1 < rule.length) {
          tok += rule[i + 1];
          i += 2;
        } else if (c === '"') {
          closed = true;
          i++;
          break;
        } else {
          tok += c;
          i++;
        }
      }
      if (!closed) return null;
    } else {
      while (i < rule.length && rule[i] !== " ") tok += rule[i++];
    }
    out.push(tok);
  }
  return out;
}

/** argv back to the text a person would type in a POSIX shell (single quotes where needed). */
export function shellQuote(argv: readonly string[]): string {
  return argv
    .map((a) => (a !== "" && /^[A-Za-z0-9_@%+=:,./[\]-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`))
    .join(" ");
}
