import type { ProxyModeFacts } from "../facts/kube-proxy.js";
import { excerpt, parsed, unparsable } from "./result.js";
import type { Result } from "../../common/result.js";

/**
 * /proxyMode: `fmt.Fprintf(w, "%s", proxyMode)` in cmd/kube-proxy/app/server.go (serveMetrics), so the
 * bare mode with no newline; one trailing newline is tolerated for answers saved by hand. kube-proxy
 * defaults an empty mode to iptables before serving it (server_linux.go platformApplyDefaults).
 */
export function parseProxyMode(text: string): Result<ProxyModeFacts> {
  const mode = text.endsWith("\n") ? text.slice(0, -1) : text;
  if (!/^[a-z]+$/.test(mode)) return unparsable(`not a proxy mode: ${excerpt(text)}`);
  return parsed({ mode });
}
