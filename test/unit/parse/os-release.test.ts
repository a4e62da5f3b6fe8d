import t from "tap";
import { readFileSync } from "node:fs";
import { parseOsRelease } from "../../../agent/parse/os-release.js";

const read = (rel: string) => readFileSync(new URL(`../../fixtures/${rel}`, import.meta.url), "utf8");

t.test("this machine's os-release", async (t) => {
  const r = parseOsRelease(read("host/etc/os-release"));
  t.same(r, {
    ok: true,
    value: {
      id: "debian",
      idLike: [],
      versionId: "12",
      versionCodename: "bookworm",
      prettyName: "Debian GNU/Linux 12 (bookworm)",
    },
  });
});

// [fixture, id, idLike, versionId, versionCodename, prettyName]
const distros: [string, string, string[], string, string | null, string][] = [
  ["ubuntu-20.04", "ubuntu", ["debian"], "20.04", "focal", "Ubuntu 20.04.6 LTS"],
  ["ubuntu-22.04", "ubuntu", ["debian"], "22.04", "jammy", "Ubuntu 22.04.2 LTS"],
  ["ubuntu-24.04", "ubuntu", ["debian"], "24.04", "noble", "Ubuntu 24.04.3 LTS"],
  ["rhel-8", "rhel", ["fedora"], "8.7", null, "Red Hat Enterprise Linux 8.7 (Ootpa)"],
  ["rhel-9", "rhel", ["fedora"], "9.6", null, "Red Hat Enterprise Linux 9.6 (Plow)"],
  ["debian-11", "debian", [], "11", "bullseye", "Debian GNU/Linux 11 (bullseye)"],
  ["debian-12", "debian", [], "12", "bookworm", "Debian GNU/Linux 12 (bookworm)"],
  ["amazon-linux-2", "amzn", ["centos", "rhel", "fedora"], "2", null, "Amazon Linux 2"],
  ["amazon-linux-2023", "amzn", ["fedora"], "2023", null, "Amazon Linux 2023"],
  ["flatcar", "flatcar", ["coreos"], "4372.0.1", null, "Flatcar Container Linux by Kinvolk 4372.0.1 (Oklo)"],
  ["bottlerocket", "bottlerocket", [], "1.34.0", null, "Bottlerocket OS 1.34.0 (aws-ecs-2)"],
  ["cos", "cos", [], "77", null, "Container-Optimized OS from Google"],
];
for (const [dir, id, idLike, versionId, versionCodename, prettyName] of distros) {
  t.test(`recorded ${dir}`, async (t) => {
    t.same(parseOsRelease(read(`os-release/${dir}/etc/os-release`)), {
      ok: true,
      value: { id, idLike, versionId, versionCodename, prettyName },
    });
  });
}

t.test("quoting and escapes per os-release(5)", async (t) => {
  const r = parseOsRelease(
    [
      "# a comment",
      "ID='single quoted $NOT_EXPANDED'",
      'PRETTY_NAME="say \\"hi\\" \\\\ \\$HOME \\`x\\` \\n"',
      "VERSION_ID=bare\\ word",
      'ID_LIKE="  rhel   fedora "',
      'VERSION_CODENAME=""',
      "",
    ].join("\n"),
  );
  t.same(r, {
    ok: true,
    value: {
      id: "single quoted $NOT_EXPANDED",
      idLike: ["rhel", "fedora"],
      versionId: "bare word",
      versionCodename: null,
      prettyName: 'say "hi" \\ $HOME `x` \\n',
    },
  });
});

t.test("empty, garbage and truncated input are typed errors", async (t) => {
  const cut = read("os-release/ubuntu-20.04/etc/os-release");
  for (const bad of [
    "",
    "\n\n# only a comment\n",
    "<html>not found</html>",
    "ID=x\u0000",
    cut.slice(0, cut.indexOf("Focal")),
  ]) {
    t.equal(parseOsRelease(bad).ok, false, JSON.stringify(bad.slice(0, 40)));
  }
});
