import type { V1Container } from "@kubernetes/client-node";

// What the DaemonSet and Pod readers both take from an object, read defensively: the client passes
// wrong types and null list entries through as the API server sent them.

/** Labels as the API sent them, keeping only string values (the client passes wrong types through). */
export const stringLabels = (l: unknown): Record<string, string> =>
  l && typeof l === "object" && !Array.isArray(l)
    ? Object.fromEntries(Object.entries(l).filter((e): e is [string, string] => typeof e[1] === "string"))
    : {};

/** A container's command line as the kubelet starts it: command, then args, strings only. */
export const containerArgv = (c: V1Container | null | undefined): string[] =>
  [...(c?.command ?? []), ...(c?.args ?? [])].filter((x) => typeof x === "string");
