import { ApiException } from "@kubernetes/client-node";
import { redactUrls } from "../../../common/redact.js";
import type { ClusterFacts } from "../../report/cluster-facts.js";

export const notFound = (e: unknown) => e instanceof ApiException && e.code === 404;

// The client's errors quote the request's URL, and so the kubeconfig server's password if it has one.
export function describe(e: unknown): string {
  return redactUrls(describeRaw(e));
}

/**
 * metav1.Status's message, whole: an authorizer's 403 quotes the user and the resource, and a cut at
 * the first escaped quote lost the permission it names.
 */
function statusMessage(body: string): string {
  let msg: unknown;
  try {
    msg = (JSON.parse(body) as { message?: unknown } | null)?.message;
  } catch {
    msg = /"message":"([^"]*)"/.exec(body)?.[1];
  }
  return typeof msg === "string" && msg !== "" ? `: ${msg.slice(0, 300)}` : "";
}

/** A read made outside the client (the node list): its failure, already said the way describe() says it. */
export class ReadFailed extends Error {}

function describeRaw(e: unknown): string {
  if (e instanceof ReadFailed) return e.message;
  if (e instanceof ApiException) {
    const body = typeof e.body === "string" ? e.body : JSON.stringify(e.body);
    return `HTTP ${e.code}${statusMessage(body ?? "")}`;
  }
  const err = e as { name?: string; message?: string; cause?: { code?: string } };
  if (err?.name === "AbortError" || err?.name === "TimeoutError") return "timed out";
  return err?.cause?.code ?? err?.message ?? String(e);
}

/**
 * A read that may fail without ending the report; its failure becomes a named gap. A 404 means
 * "absent" only for a named object (`absentOk`): a list or /version cannot be absent.
 */
export async function optional<T>(
  what: string,
  gaps: ClusterFacts["gaps"],
  call: () => Promise<T>,
  absentOk = true,
): Promise<T | null> {
  try {
    return await call();
  } catch (e) {
    if (!absentOk || !notFound(e)) gaps.push({ what, reason: describe(e) });
    return null;
  }
}
