import type { JsonBounds } from "../../common/bounded-json.js";

/**
 * What one `ip -j` listing may make JSON.parse build. JSON.parse's own working memory is not bounded by
 * the scan thread's heap limit: 11 MB of empty objects (4 million of them) took a thread with a 48 MB
 * limit to 468 MB of RSS. A real address is 8 elements (the entry and its 7 fields): a node with 10,000
 * Services dual-stack lists ~20,000 on kube-ipvs0, ~160,000 elements; this is three times that, and
 * about 60 MB of parse at the ~115 bytes an element cost there.
 */
export const LISTING_JSON_BOUNDS: JsonBounds = { maxElements: 500_000, maxDepth: 16 };
