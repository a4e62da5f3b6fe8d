// Every finding id, node or cluster, has one page in the repository: docs/findings/<id>.md.
// Ids are stable across releases, so the page's address is too; the link names the branch, not a tag,
// because a page is corrected in place when what it cites changes upstream.

/** The repository's address (package.json `repository`), where the pages are read on the web. */
export const REPOSITORY_URL = "https://github.com/proxyscope/proxyscope";

/** Ids are lowercase words joined by "-"; anything else (a Prometheus label, say) gets no link. */
export function isFindingId(id: string): boolean {
  return /^[a-z0-9]+(-[a-z0-9]+)*$/.test(id);
}

/** The page's path in a checkout: what a reader with the repository opens. */
export function findingPagePath(id: string): string {
  return `docs/findings/${encodeURIComponent(id)}.md`;
}

/** The page's stable address: each finding's `reference`. */
export function findingPageUrl(id: string): string {
  return `${REPOSITORY_URL}/blob/main/${findingPagePath(id)}`;
}
