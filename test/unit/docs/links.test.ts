// Every link a reader can follow in the README and docs/ resolves: a relative link names a file of this
// repository, and its #fragment names a heading of that file, by GitHub's anchor rule (lowercase, markup
// and punctuation dropped, spaces to hyphens, a repeated heading gets -1, -2, …). Links to this
// project's own repository on GitHub are held to the same rule through their path. And nothing a user
// reads names an internal work item ("issue #14", "(#17)"): it says what the thing is.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import t from "tap";
import { REPO_ROOT } from "../../helpers/uml.js";

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? markdownFiles(join(dir, e.name)) : e.name.endsWith(".md") ? [join(dir, e.name)] : [],
  );
}
const FILES = [
  join(REPO_ROOT, "README.md"),
  join(REPO_ROOT, "CHANGELOG.md"),
  ...markdownFiles(join(REPO_ROOT, "docs")),
];

/** The text outside fenced code blocks and inline code, where links are links. */
export function prose(md: string): string {
  // Fenced blocks become blank lines, so line numbers stay the file's.
  return md
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, (block) => block.replace(/[^\n]/g, ""))
    .replace(/`[^`\n]*`/g, "");
}

/** GitHub's heading anchors of a Markdown file (github-slugger's rule). */
export function anchors(md: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const headings = md.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "").replace(/`([^`\n]*)`/g, "$1");
  for (const m of headings.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = m[1]!
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
      .replace(/<[^>]+>/g, "")
      .toLowerCase();
    const base = text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  // Explicit anchors (<a id="…"> / <a name="…">) are targets too.
  for (const m of md.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(m[1]!);
  return out;
}

const OWN_REPO = /^https:\/\/github\.com\/proxyscope\/proxyscope\/(?:blob|tree)\/[^/]+\/(.*)$/;

/** Where a link points inside this repository, or null for a link elsewhere. */
function target(from: string, href: string): { path: string; fragment: string | null } | null {
  const own = OWN_REPO.exec(href);
  if (own) href = `/${own[1]}`;
  else if (/^[a-z][a-z0-9+.-]*:/i.test(href)) return null;
  const [path, fragment] = href.split("#", 2) as [string, string | undefined];
  const abs =
    path === "" ? from : path.startsWith("/") ? join(REPO_ROOT, path) : resolve(dirname(from), path);
  return { path: decodeURIComponent(abs), fragment: fragment ?? null };
}

const anchorCache = new Map<string, Set<string>>();
function anchorsOf(path: string): Set<string> {
  let a = anchorCache.get(path);
  if (!a) anchorCache.set(path, (a = anchors(readFileSync(path, "utf8"))));
  return a;
}

t.test("the anchor rule is GitHub's", async (t) => {
  const a = anchors(
    "# To add X, touch these files\n## `GET /verify` answers\n## Fix\n## Fix\n```\n# not a heading\n```\n",
  );
  t.same([...a], ["to-add-x-touch-these-files", "get-verify-answers", "fix", "fix-1"]);
});

t.test("every link in the README and docs/ resolves", async (t) => {
  const broken: string[] = [];
  let checked = 0;
  for (const file of FILES) {
    const md = readFileSync(file, "utf8");
    const links = [
      ...[...prose(md).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!),
      ...[...prose(md).matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)].map((m) => m[1]!),
    ];
    for (const href of links) {
      const to = target(file, href);
      if (to === null) continue;
      checked++;
      const where = `${relative(REPO_ROOT, file)}: ${href}`;
      if (!existsSync(to.path)) {
        broken.push(`${where} (no such file)`);
        continue;
      }
      if (to.fragment !== null && statSync(to.path).isFile() && to.path.endsWith(".md"))
        if (!anchorsOf(to.path).has(to.fragment)) broken.push(`${where} (no heading #${to.fragment})`);
    }
  }
  t.ok(checked > 100, `links were found and checked (${checked})`);
  t.same(broken, [], "broken links");
});

t.test("no internal work-item number reaches a reader", async (t) => {
  const found: string[] = [];
  for (const file of FILES) {
    const lines = prose(readFileSync(file, "utf8")).split("\n");
    lines.forEach((line, i) => {
      // "#12" not part of an upstream reference (owner/repo#12, a URL's fragment, an anchor link).
      for (const m of line.matchAll(/(^|[\s(])((?:[Ii]ssue )?#\d{1,3})\b/g))
        found.push(`${relative(REPO_ROOT, file)}:${i + 1}: ${m[2]}`);
      for (const m of line.matchAll(/\b[Ii]ssue \d{1,3}\b/g))
        found.push(`${relative(REPO_ROOT, file)}:${i + 1}: ${m[0]}`);
    });
  }
  t.same(found, [], "say what the thing is instead");
});
