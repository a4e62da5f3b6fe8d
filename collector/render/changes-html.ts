import { html as h } from "../../common/escape.js";
import type { ServiceChanges } from "../plan/changes/schema.js";

// A page with no script and no remote resource: the CSP allows its inline style only.
const CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";
const CSS =
  "body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 6px;vertical-align:top;text-align:left}.nk{color:#a60}";

/** Every value from the API or a node goes through h(); the finding links are built from the id alone. */
export function renderChangesHtml(c: ServiceChanges): string {
  const rows = c.lines
    .map(
      (l) =>
        `<tr><td>${h(l.service)}</td><td>${h(l.change)}</td><td>${h(l.why)} <a href="${h(l.findingPage)}">${h(l.finding)}</a></td>` +
        `<td${l.known ? "" : ' class="nk"'}>${h(l.where)}</td><td>${h(l.notKnown.join("; ") || "-")}</td>` +
        `<td>${h(l.detail.join("; ") || "-")}</td><td>${h(l.todo)}</td></tr>`,
    )
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${h(CSP)}">
<meta name="referrer" content="no-referrer">
<title>proxyscope: what changes for each Service</title><style>${CSS}</style></head><body>
<h1>What changes for each Service at the switch from ipvs to nftables mode</h1>
<p>${c.services} Service(s), ${c.lines.length} change line(s). Generated ${h(c.generatedAt)}.</p>
${c.notKnown.map((n) => `<p class="nk"><strong>${h(n)}</strong></p>`).join("\n")}
<table><thead><tr><th>Service</th><th>change</th><th>why</th><th>where</th><th>not known</th><th>detail</th><th>what to do</th></tr></thead>
<tbody>
${rows}
</tbody></table></body></html>
`;
}
