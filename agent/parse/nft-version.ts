import { excerpt, parsed, unparsable } from "./result.js";
import type { Result } from "../../common/result.js";

/** `nft --version` prints "nftables v1.0.6 (Lester Gooch #5)"; returns "1.0.6". */
export function parseNftVersionOutput(text: string): Result<string> {
  const m = /^nftables v(\d+(?:\.\d+)+)\b/m.exec(text);
  if (!m?.[1]) return unparsable(`not nft --version output: ${excerpt(text)}`);
  return parsed(m[1]);
}

/**
 * The upstream part of a distro package version: drops a Debian epoch ("1:"), the Debian revision
 * after the last "-" ("-2+deb12u2", "-1ubuntu3") or apk's "-r0", and any "+dfsg"/"~rc" suffix.
 */
export function upstreamVersion(packageVersion: string): Result<string> {
  let v = packageVersion.trim().replace(/^\d+:/, "");
  const dash = v.lastIndexOf("-");
  if (dash > 0) v = v.slice(0, dash);
  const m = /^(\d+(?:\.\d+)*)/.exec(v);
  if (!m?.[1]) return unparsable(`not a package version: ${excerpt(packageVersion)}`);
  return parsed(m[1]);
}
