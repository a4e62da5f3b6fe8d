import { md } from "../../common/escape.js";
import type { ServiceChanges } from "../plan/changes/schema.js";

const row = (cells: string[]) => `| ${cells.join(" | ")} |`;

/** For a ticket or a mail to the Service's owners: every value from the API or a node goes through md(). */
export function renderChangesMarkdown(c: ServiceChanges): string {
  const out = [
    "# What changes for each Service at the switch from ipvs to nftables mode",
    "",
    `${c.services} Service(s), ${c.lines.length} change line(s). Generated ${md(c.generatedAt)}. ` +
      `Each row of [docs/ipvs-to-nftables.md](${c.lines[0]?.doc ?? "docs/ipvs-to-nftables.md"}) names its upstream source.`,
  ];
  for (const n of c.notKnown) out.push("", `> **${md(n)}**`);
  if (c.lines.length > 0) {
    out.push(
      "",
      "| Service | change | why | where | not known | detail | what to do |",
      "|---|---|---|---|---|---|---|",
    );
    for (const l of c.lines)
      out.push(
        row([
          md(l.service),
          md(l.change),
          `${md(l.why)} ([${md(l.finding)}](${l.findingPage}))`,
          md(l.where),
          md(l.notKnown.join("; ") || "-"),
          md(l.detail.join("; ") || "-"),
          md(l.todo),
        ]),
      );
  }
  return `${out.join("\n")}\n`;
}
