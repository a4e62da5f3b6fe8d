// docs/cli.md's flag tables are the reference for both programs: every flag each command takes, and the
// environment variables it is read from, must be in them, so the document cannot drift from the code.
import { readFileSync } from "node:fs";
import t from "tap";
import { AGENT_FLAGS } from "../../../agent/config.js";
import { COLLECTOR_FLAGS, REPORT_FORMATS, VERIFY_FORMATS } from "../../../collector/config.js";
import { envOf, type FlagSpec } from "../../../common/cli.js";

const doc = readFileSync(new URL("../../../docs/cli.md", import.meta.url), "utf8");
const section = (title: string) => {
  const start = doc.indexOf(`### ${title}`);
  const end = doc.indexOf("\n## ", start);
  return doc.slice(start, end);
};

for (const [title, flags] of [
  ["proxyscope-agent", AGENT_FLAGS],
  ["proxyscope (the collector)", COLLECTOR_FLAGS],
] as [string, Record<string, readonly FlagSpec[]>][]) {
  t.test(title, async (t) => {
    const text = section(title);
    t.ok(text.length > 0, "the section exists");
    for (const [cmd, specs] of Object.entries(flags))
      for (const s of specs) {
        const row = text.split("\n").find((l) => l.startsWith(`| \`${s.flags.replace(/\|/g, "\\|")}\` |`));
        t.ok(row, `${s.flags} has a row`);
        for (const e of envOf(s)) t.match(row, `\`${e}\``, `${s.flags}: ${e}`);
        t.match(row, new RegExp(`\\| [^|]*\\b${cmd}\\b`), `${s.flags}: ${cmd}`);
      }
  });
}

// The -o lists are derived in collector/config/formats.ts (help, schema and checks); the document must name the same.
t.test("the collector's output formats, in the flag table and the formats table", async (t) => {
  const row = section("proxyscope (the collector)")
    .split("\n")
    .find((l) => l.startsWith("| `-o, --output <format>` |"));
  t.match(row, `| ${REPORT_FORMATS.join("\\|")} (default table)`);
  const formats = (cmd: string) =>
    doc
      .split("\n")
      .find((l) => l.startsWith(`| collector | ${cmd}`))
      ?.split("|")[3]
      ?.match(/`[a-z]+`/g)
      ?.map((f) => f.slice(1, -1));
  t.same(formats("`report`"), [...REPORT_FORMATS]);
  t.same(formats("`verify`"), [...VERIFY_FORMATS]);
});
