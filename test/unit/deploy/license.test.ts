// The licence package.json names is the file the repository and the image carry: the Apache License 2.0,
// verbatim (tools such as licensee and GitHub recognise it only when the text is the canonical one).
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { ROOT } from "./lib.js";

const text = readFileSync(join(ROOT, "LICENSE"), "utf8");

t.test("LICENSE is the canonical Apache License 2.0 text", async (t) => {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { license: string };
  t.equal(pkg.license, "Apache-2.0");
  // sha256 of https://www.apache.org/licenses/LICENSE-2.0.txt (also Debian's /usr/share/common-licenses/Apache-2.0).
  t.equal(
    createHash("sha256").update(text).digest("hex"),
    "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30",
  );
  t.match(text, /^\s+Apache License\n\s+Version 2\.0, January 2004\n/);
  t.match(text, /END OF TERMS AND CONDITIONS/);
});

t.test("the image's label and the changelog agree", async (t) => {
  t.match(
    readFileSync(join(ROOT, "Dockerfile"), "utf8"),
    /org\.opencontainers\.image\.licenses="Apache-2\.0"/,
  );
  const changelog = readFileSync(join(ROOT, "CHANGELOG.md"), "utf8");
  t.match(changelog, /^# Changelog\n/, "Keep a Changelog heading");
  t.match(changelog, /^## \[Unreleased\]$/m, "an Unreleased section for the next release");
});

t.test("the package's version has a dated release section and a tag link", async (t) => {
  const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    version: string;
  };
  const changelog = readFileSync(join(ROOT, "CHANGELOG.md"), "utf8");
  const v = version.replace(/\./g, "\\.");
  // The release workflow cuts the GitHub release's notes from this section.
  t.match(changelog, new RegExp(`^## \\[${v}\\] - \\d{4}-\\d{2}-\\d{2}$`, "m"), "a dated section");
  t.ok(
    changelog.indexOf("## [Unreleased]") < changelog.indexOf(`## [${version}]`),
    "Unreleased above the release",
  );
  t.match(changelog, new RegExp(`^\\[Unreleased\\]: https://\\S+/compare/v${v}\\.\\.\\.HEAD$`, "m"));
  t.match(changelog, new RegExp(`^\\[${v}\\]: https://\\S+/releases/tag/v${v}$`, "m"));
});
