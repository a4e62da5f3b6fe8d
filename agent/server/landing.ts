import { html } from "../../common/escape.js";
import type { RouteClass } from "../../common/route-access.js";

interface LandingRoute {
  path: string;
  /** Who may read it (access.ts decides; a test holds this list to it). */
  access: RouteClass;
  what: string;
  /** Needs a query: listed, not linked. */
  query?: string;
}

/**
 * What `GET /` lists, as node_exporter's landing page does: route names and what they hold, never
 * anything a route serves, so the page is public (it says no more than this file and the docs do).
 */
export const AGENT_LANDING_ROUTES: readonly LandingRoute[] = [
  { path: "/metrics", access: "public", what: "Prometheus metrics, rendered once per scan" },
  { path: "/healthz", access: "probe", what: "alive" },
  { path: "/readyz", access: "probe", what: "a first scan has completed" },
  { path: "/report/summary", access: "public", what: "phase, verdict and finding ids of the last scan" },
  { path: "/report/schema", access: "public", what: "the NodeReport JSON Schema" },
  { path: "/report/fleet/schema", access: "public", what: "the FleetDigest JSON Schema" },
  { path: "/report", access: "detail", what: "the last scan's NodeReport" },
  { path: "/report/previous", access: "detail", what: "the scan before it" },
  { path: "/report/fleet", access: "detail", what: "the FleetDigest the collector reads" },
  { path: "/parity", access: "detail", what: "per-Service parity" },
  { path: "/verify", access: "detail", what: "the node acceptance check over the last scan" },
  {
    path: "/ipvs/virtual-server",
    access: "detail",
    what: "one virtual server's real servers, read fresh",
    query: "?protocol=TCP&address=…&port=…",
  },
];

const ACCESS_WORDS: Record<RouteClass, string> = {
  probe: "always open",
  public: "public",
  detail: "detail: loopback or authenticated clients",
};

/** The agent's `GET /`: every value escaped, though none comes from the node. */
export function agentLandingPage(version: string): string {
  const rows = AGENT_LANDING_ROUTES.map((r) => {
    const name =
      r.query === undefined
        ? `<a href="${html(r.path)}">${html(r.path)}</a>`
        : `<code>${html(r.path + r.query)}</code>`;
    return `<li>${name}: ${html(r.what)} (${html(ACCESS_WORDS[r.access])})</li>`;
  }).join("\n");
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>proxyscope agent</title></head>
<body>
<h1>proxyscope agent</h1>
<p>Version ${html(version)}</p>
<ul>
${rows}
</ul>
</body>
</html>
`;
}
