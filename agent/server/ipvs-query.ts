import { isIPv6 } from "node:net";
import { z } from "zod";

// Strict on purpose: this endpoint reads a 7 MB kernel table on a large node, so a malformed or
// unexpected query is refused before any I/O. Repeated parameters arrive as arrays and fail here.
export const VirtualServerQuery = z.strictObject({
  protocol: z.enum(["TCP", "UDP", "SCTP"]),
  address: z.union([z.ipv4(), z.ipv6()]).transform(canonicalAddress),
  port: z
    .string()
    .regex(/^[0-9]{1,5}$/)
    .transform(Number)
    .pipe(z.number().int().min(1).max(65535)),
});
export type VirtualServerQuery = z.infer<typeof VirtualServerQuery>;

const FIELD_PROBLEM: Record<string, string> = {
  protocol: "protocol must be TCP, UDP or SCTP",
  address: "address must be one IPv4 or IPv6 address",
  port: "port must be one integer from 1 to 65535",
};

/** Problems in fixed words: the caller's input is never echoed back. */
export function describeQueryProblems(error: z.ZodError): string[] {
  const out = new Set<string>();
  for (const issue of error.issues) {
    const field = String(issue.path[0] ?? "");
    if (issue.code === "unrecognized_keys") out.add("only protocol, address and port are accepted");
    else out.add(FIELD_PROBLEM[field] ?? "invalid query");
  }
  return [...out];
}

/** IPv6 in its compressed lower-case form, the way the IPVS parser prints addresses. */
function canonicalAddress(address: string): string {
  if (!isIPv6(address)) return address;
  return new URL(`http://[${address}]/`).hostname.slice(1, -1);
}
