/**
 * Whether a request's Accept-Encoding allows gzip (RFC 9110 §12.5.3): a `gzip` (or `*`) coding whose
 * q-value is not 0. Prometheus sends `Accept-Encoding: gzip` on every scrape (scrape/scrape.go,
 * acceptEncodingHeader); anything unreadable here means identity, which every client accepts.
 */
export function acceptsGzip(header: string | string[] | undefined): boolean {
  const value = Array.isArray(header) ? header.join(",") : header;
  if (value === undefined) return false;
  let gzip: boolean | null = null;
  let star = false;
  for (const part of value.split(",")) {
    const [coding = "", ...params] = part.split(";").map((x) => x.trim().toLowerCase());
    const q = params.find((p) => p.startsWith("q="));
    const allowed = q === undefined || Number(q.slice(2)) > 0;
    if (coding === "gzip" || coding === "x-gzip") gzip = allowed;
    else if (coding === "*") star = allowed;
  }
  return gzip ?? star;
}
