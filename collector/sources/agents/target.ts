import type { Getter } from "../../../common/http.js";

export interface AgentTarget {
  /** The node the API places this agent on; null when only a URL is known (static list). */
  node: string | null;
  /** Base URL of the agent, e.g. http://10.0.0.7:9977, or its pod's proxy on the API server. */
  url: string;
  /** How to GET from it; absent: directly (httpGet). Through the API server: with its credentials. */
  get?: Getter;
}
