/**
 * What anything that can fail with a reason returns (a parser, an API read, a Prometheus query): a value,
 * or why not. Never thrown, so a caller cannot forget the failure: it must look at `ok` to get the value.
 */
export type Result<T> = { ok: true; value: T } | { ok: false; error: string };
