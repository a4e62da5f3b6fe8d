import t from "tap";
import { cpSync, mkdirSync } from "node:fs";
import { osReleaseProbe } from "../../../agent/probes/os-release.js";
import { fixture, probeContext, tree } from "../../helpers/probe-context.js";

// The host's os-release through the mounted host root, against recorded files.

t.test("os-release: /etc first, /usr/lib as fallback, never the container's own", async (t) => {
  t.same(await osReleaseProbe.run(probeContext({ hostRoot: fixture("os-release/ubuntu-20.04") })), {
    ok: true,
    facts: {
      source: "/etc/os-release",
      id: "ubuntu",
      idLike: ["debian"],
      versionId: "20.04",
      versionCodename: "focal",
      prettyName: "Ubuntu 20.04.6 LTS",
    },
  });
  const root = tree(t);
  mkdirSync(`${root}/usr/lib`, { recursive: true });
  cpSync(fixture("host/usr/lib/os-release"), `${root}/usr/lib/os-release`);
  const r = await osReleaseProbe.run(probeContext({ hostRoot: root }));
  t.equal(r.ok && r.facts.source, "/usr/lib/os-release");
  t.equal(r.ok && r.facts.versionCodename, "bookworm");

  const empty = await osReleaseProbe.run(probeContext({ hostRoot: tree(t) }));
  t.equal(!empty.ok && empty.error.kind, "io");

  const bad = tree(t, { etc: { "os-release": "<html>502 Bad Gateway</html>\n" } });
  const g = await osReleaseProbe.run(probeContext({ hostRoot: bad }));
  t.same(!g.ok && [g.error.kind, g.error.command], ["garbage", `${bad}/etc/os-release`]);
});
