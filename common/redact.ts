// Every URL shown in an error, a log line or a report goes through here first: a password in a flag's
// URL (http://user:pw@host) or in a kubeconfig's server, or a token in a query string, must not end up
// in /report, a log collector or a ticket. One function, so no renderer keeps its own idea of a secret.

/** What replaces a URL's user and password, and a secret-looking query value. */
const REDACTED = "***";

// A scheme, "//", then the authority up to the last "@" before the path: WHATWG URL takes the last
// "@" as the end of the userinfo, so "u:p@ss@host" hides "p@ss", not "p".
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^/?#\\\s"'<>]*@/gi;
// Query parameters whose names say they carry a credential (access_token=, api_key=, X-Amz-Signature=).
const SECRET_PARAM =
  /([?&;](?:[\w.-]*(?:token|secret|passw(?:or)?d|pwd|api[_-]?key|apikey|auth|signature|sig|credential|session)[\w.-]*)=)[^&#\s"'<>]*/gi;

/** The text with every URL's userinfo, and every secret-looking query value, replaced by REDACTED. */
export function redactUrls(text: string): string {
  return text.replace(USERINFO, `$1${REDACTED}@`).replace(SECRET_PARAM, `$1${REDACTED}`);
}

/** True when a URL carries a user name or password (what `fetch` refuses to send, and we refuse to show). */
export function hasUserinfo(url: string): boolean {
  try {
    const u = new URL(url);
    return u.username !== "" || u.password !== "";
  } catch {
    return false;
  }
}
