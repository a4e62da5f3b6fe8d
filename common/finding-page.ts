import { VERSION } from "./version.js";

// Every finding id, node or cluster, has one page in the repository: docs/findings/<id>.md.
// The link names this release's tag, not the branch: a report is cited later, and the page it cites
// must say what this version did (a page corrected on main after the release is the next version's).

/** The repository's address (package.json `repository`), where the pages are read on the web. */
const REPOSITORY_URL = "https://github.com/proxyscope/proxyscope";

/**
 * The git ref the links name: this release's tag (package.json version); main only when the version
 * could not be read, since a link to a tag "vunknown" would lead nowhere.
 */
const DOCS_REF = VERSION === "unknown" ? "main" : `v${VERSION}`;

/** A file of the repository, at this release. */
export function repositoryFileUrl(path: string): string {
  return `${REPOSITORY_URL}/blob/${DOCS_REF}/${path}`;
}

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
  return repositoryFileUrl(findingPagePath(id));
}
