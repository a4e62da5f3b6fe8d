// The answer of the agent's GET /verify and of `proxyscope-agent verify --json`: the collector reads it too.
import { z } from "zod";

export const CheckStatus = z.enum(["ok", "fail", "not-run", "skipped"]);

export const VerifyCheck = z.object({
  /** Stable: scripts and the collector key on it. */
  id: z.enum([
    "proxy-mode",
    "ipvs-virtual-servers",
    "kube-ipvs0",
    "kube-proxy-ipsets",
    "kube-proxy-iptables-chains",
    "nftables-table",
    "sync-failures",
    "last-sync",
    "service-connect",
    "service-parity",
    "nodeport-addresses",
    "nodeport-connect",
    "ipvs-virtual-servers-present",
    "kube-ipvs0-service-ips",
    "nftables-table-left",
    "scan-complete",
  ]),
  name: z.string(),
  /** not-run fails the verification like fail does; skipped only with an explicit --skip-connect,
   *  for parity when nothing can be compared (no --parity-snapshot, none taken, too old: said in detail),
   *  and for the NodePort connect when not asked (--nodeport-connect) or no NodePort exists. */
  status: CheckStatus,
  /** Why it failed or was not run; a short note when it passed. */
  detail: z.string().nullable(),
});
export type VerifyCheck = z.infer<typeof VerifyCheck>;

export const VerifyResult = z.object({
  schemaVersion: z.literal("1"),
  node: z.string(),
  checkedAt: z.string().datetime(),
  passed: z.boolean(),
  checks: z.array(VerifyCheck),
});
export type VerifyResult = z.infer<typeof VerifyResult>;

export function checkFails(c: VerifyCheck): boolean {
  return c.status === "fail" || c.status === "not-run";
}
