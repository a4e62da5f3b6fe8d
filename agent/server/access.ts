import type { ServerAccess } from "../../common/web-access.js";

/**
 * Who may read what on the agent's port (the model is common/web-access.ts, shared with the collector):
 * the probes are always open; the public part (/metrics, /report/summary, the schemas) is open, or
 * authenticated where the web config asks for it; the detail (firewall rule text, addresses,
 * kube-proxy's configuration, per-Service backends) is everything else.
 *
 * Decided on the route the router matched (common/route-access.ts); a route in neither list below is
 * detail. DETAIL_ROUTES names the agent's detail routes for the docs and tests.
 */
export const PROBE_ROUTES: ReadonlySet<string> = new Set(["/healthz", "/readyz"]);
export const PUBLIC_ROUTES: ReadonlySet<string> = new Set([
  // The landing page: route names and the version (public on /metrics too), nothing a route serves.
  "/",
  "/metrics",
  "/report/summary",
  "/report/schema",
  "/report/fleet/schema",
]);
export const DETAIL_ROUTES: ReadonlySet<string> = new Set([
  "/report",
  "/report/previous",
  // Its findings carry their evidence (addresses, rule text), as /report's do.
  "/report/fleet",
  "/parity",
  "/ipvs/virtual-server",
  "/verify",
]);

export const AGENT_ACCESS: ServerAccess = {
  routes: { probe: PROBE_ROUTES, public: PUBLIC_ROUTES },
  realm: "proxyscope-agent",
  loopbackOnly:
    "this route answers loopback clients only: configure authentication (--web.config.file) or --detail-from any",
};
