// Commands that delete kernel state something may still be using (the guide's cleanup section,
// kube-proxy's own): a remedy holding one of them deletes. Shared by the rule tests and the scenario and
// profile tests that check "a guess is never a reason to delete".
export const DELETING: readonly RegExp[] = [
  /ipvsadm\s+(--clear|-C)\b/,
  /ipvsadm\s+-D\b/,
  /ip link del(ete)?\s+kube-ipvs0/,
  /ipset (destroy|-X)\b/,
  /nft (delete|flush) (table|ruleset)/,
  /iptables\S*\s.*\s-[FX]\b/,
  /kube-proxy --cleanup/,
  /proxyscope-agent cleanup/,
];

/** Where the first deleting command starts in a remedy, or -1. */
export function firstDeletion(remedy: string): number {
  const at = DELETING.map((re) => remedy.search(re)).filter((i) => i >= 0);
  return at.length === 0 ? -1 : Math.min(...at);
}
