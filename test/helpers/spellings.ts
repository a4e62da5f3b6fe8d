// Ways to write one request path that a router may take for it, or that a check comparing strings
// may not: what a guard in front of the router must not be fooled by.

const hex = (c: string) => c.charCodeAt(0).toString(16).padStart(2, "0");

/** Request targets for `path` (which starts with "/"); `query` is appended where it fits. */
export function spellings(path: string, query = ""): string[] {
  const q = query === "" ? "" : `?${query}`;
  if (path === "/")
    return [
      "/",
      "%2F",
      "%2f",
      "http://x",
      "http://x/",
      "https://x/",
      "//",
      "/./",
      "/x/..",
      "/x/../",
      "/#x",
      "/?",
      "/;x",
    ].map((s) => `${s}${q}`);
  const out = new Set<string>([`${path}${q}`]);
  const chars = [...path];
  // One character percent-escaped at a time, in upper and lower case hex, and all of them at once.
  chars.forEach((c, i) => {
    for (const h of [hex(c).toUpperCase(), hex(c).toLowerCase()]) {
      out.add(`${chars.slice(0, i).join("")}%${h}${chars.slice(i + 1).join("")}${q}`);
    }
  });
  out.add(`${chars.map((c) => (c === "/" ? c : `%${hex(c)}`)).join("")}${q}`);
  out.add(`${chars.map((c) => `%${hex(c)}`).join("")}${q}`);
  // Absolute form (RFC 9112 3.2.2), with and without a port, http and https.
  out.add(`http://x${path}${q}`);
  out.add(`http://10.233.0.1:1${path}${q}`);
  out.add(`https://x${path}${q}`);
  out.add(`http://x/%${hex(chars[1]!)}${path.slice(2)}${q}`);
  // Dot segments, doubled and trailing slashes, case.
  out.add(`/.${path}${q}`);
  out.add(`/x/..${path}${q}`);
  out.add(`/${path}${q}`);
  out.add(`${path.replace(/\//g, "//")}${q}`);
  out.add(`${path}/${q}`);
  out.add(`${path.toUpperCase()}${q}`);
  out.add(`${path[0]}${path[1]!.toUpperCase()}${path.slice(2)}${q}`);
  out.add(`${path.replace(/\/(?!.*\/)/, "/./")}${q}`);
  // Suffixes a router may drop: fragment, empty query, matrix parameter, NUL, encoded slash.
  out.add(`${path}#x${q}`);
  out.add(`${path}?${query}`);
  out.add(`${path};x${q}`);
  out.add(`${path}%00${q}`);
  out.add(`${path}%2f${q}`);
  out.add(`${path.slice(0, path.lastIndexOf("/"))}%2F${path.slice(path.lastIndexOf("/") + 1)}${q}`);
  return [...out].filter((s) => s !== "");
}
