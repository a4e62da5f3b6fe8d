import type { JsonBounds } from "../../common/bounded-json.js";

// What one agent answer may cost the collector. Measured on the reports the node benchmark recorded
// (bench/results/samples): the largest, ipvs-10000.report.json (a node with 10,000 Services), is
// 195 KB, 13,163 JSON elements, 7 levels deep; its /report/fleet digest is 2.2 KB, 54 elements. The
// agent's own cuts bound a report above that: with the parity fact full (500 Service ports, each with
// 4 addresses and 100 + 10 + 10 IPv6 endpoints) the report is 2.2 MB and at most 81,000 elements, its
// digest 1.9 MB and 64,000, and judging either needs under 24 MB of heap. Each cap below is wide of
// both, and far below what once took the collector past its 512Mi limit.

/** 4 MiB: 21 times the 10,000-Service report, 1.9 times a report with the parity fact full. */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/** 200,000 elements: 15 times the 10,000-Service report, 2.5 times one with the parity fact full. */
export const ANSWER_JSON_BOUNDS: JsonBounds = { maxElements: 200_000, maxDepth: 32 };

/**
 * The heap the thread judging answers may use (answer-judge.ts): 2.7 times what the largest report
 * the agent can send needs. Within the bounds above a hostile answer can still make validation costly
 * (zod lists an issue per missing field: 150,000 empty findings are 1.2 million issues, over 1 GB);
 * this cap ends such a judgement instead of the collector.
 */
export const JUDGE_HEAP_MB = 64;

/** How every answer refused for its size is named, whichever bound it hit. */
export const TOO_LARGE = "answer too large";
