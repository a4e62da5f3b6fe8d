import t, { type Test } from "tap";
import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ToolRunner } from "../../../agent/io/run.js";
import { nftVersionProbe } from "../../../agent/probes/nft-version.js";
import { fixture, probeContext, tree } from "../../helpers/probe-context.js";
import { toolDir } from "../../helpers/tool-scripts.js";

// The host's nft version: its package database first, never the image's own nft.

/** An nft on the tool path that must not be believed over the host's package database. */
function nftTool(t: Test, line: string): ToolRunner {
  const d = toolDir({ nft: { stdout: `${line}\n` } });
  t.teardown(d.remove);
  return d.runner;
}

t.test("nft-version: host dpkg database wins, no exec under a mounted host root", async (t) => {
  const tools = nftTool(t, "nftables v9.9.9 (image, not host)");
  t.same(await nftVersionProbe.run(probeContext({ tools })), {
    ok: true,
    facts: { version: "1.0.6", source: "dpkg", detail: "nftables 1.0.6-2+deb12u2" },
  });

  const apkRoot = tree(t, {
    lib: { apk: { db: { installed: "P:musl\nV:1.2.5-r0\n\nP:nftables\nV:1.0.9-r2\n\n" } } },
  });
  t.same(await nftVersionProbe.run(probeContext({ hostRoot: apkRoot, tools })), {
    ok: true,
    facts: { version: "1.0.9", source: "apk", detail: "nftables 1.0.9-r2" },
  });

  const rpmRoot = tree(t, { var: { lib: { rpm: { "rpmdb.sqlite": "SQLite format 3\u0000" } } } });
  const rpm = await nftVersionProbe.run(probeContext({ hostRoot: rpmRoot, tools }));
  t.equal(rpm.ok && rpm.facts.source, "none");
  t.equal(rpm.ok && rpm.facts.version, null);
  t.match(rpm.ok && rpm.facts.detail, /RPM database .*rpmdb\.sqlite/);

  const noDb = await nftVersionProbe.run(probeContext({ hostRoot: tree(t), tools }));
  t.same(noDb.ok && [noDb.facts.version, noDb.facts.source], [null, "none"]);
  // Bottlerocket: no package database and no nft binary (bottlerocket-os/bottlerocket#4548).
  t.equal(noDb.ok && noDb.facts.installed, false, "no database and no binary: not installed");
  t.match(noDb.ok && noDb.facts.detail, /^not installed: .*no nft binary under /);
  // A binary nobody can ask (a container cannot run the host's nft) is unknown, not absent.
  const binOnly = tree(t, { usr: { sbin: { nft: "ELF" } } });
  const b = await nftVersionProbe.run(probeContext({ hostRoot: binOnly, tools }));
  t.same(b.ok && [b.facts.version, b.facts.installed], [null, undefined]);

  const noNft = tree(t, {
    var: {
      lib: { dpkg: { status: "Package: iproute2\nStatus: install ok installed\nVersion: 6.1.0-3\n\n" } },
    },
  });
  t.same(await nftVersionProbe.run(probeContext({ hostRoot: noNft, tools })), {
    ok: true,
    facts: {
      version: null,
      source: "dpkg",
      detail:
        "not installed: the host's dpkg database has no nftables package installed, and there is no nft binary under " +
        `${noNft} (/usr/sbin/nft, /sbin/nft, /usr/bin/nft, /bin/nft, /usr/local/sbin/nft)`,
      installed: false,
    },
  });
  // dpkg has no package but an nft binary is there (built from source): unknown, not "not installed".
  const selfBuilt = tree(t, {
    usr: { local: { sbin: { nft: "ELF" } } },
    var: {
      lib: { dpkg: { status: "Package: iproute2\nStatus: install ok installed\nVersion: 6.1.0-3\n\n" } },
    },
  });
  const sb = await nftVersionProbe.run(probeContext({ hostRoot: selfBuilt, tools }));
  t.same(sb.ok && [sb.facts.version, sb.facts.installed], [null, undefined]);

  const garbage = tree(t, { var: { lib: { dpkg: { status: "this is not\na status file\n" } } } });
  const g = await nftVersionProbe.run(probeContext({ hostRoot: garbage, tools }));
  t.same(!g.ok && g.error.kind, "garbage");
});

t.test(
  "nft-version: the answer kept for an unchanged package database is the same; a changed one is read again",
  async (t) => {
    const tools = new ToolRunner([fixture("no-such-tool-dir")]);
    const status = (v: string) => `Package: nftables\nStatus: install ok installed\nVersion: ${v}\n\n`;
    const root = tree(t, { var: { lib: { dpkg: { status: status("1.0.6-2") } } } });
    const db = join(root, "var/lib/dpkg/status");
    const want = (v: string, d: string) => ({
      ok: true,
      facts: { version: v, source: "dpkg", detail: `nftables ${d}` },
    });
    t.same(await nftVersionProbe.run(probeContext({ hostRoot: root, tools })), want("1.0.6", "1.0.6-2"));
    t.same(
      await nftVersionProbe.run(probeContext({ hostRoot: root, tools })),
      want("1.0.6", "1.0.6-2"),
      "kept answer",
    );
    // dpkg writes status-new and renames it over status: a new inode, so a new answer.
    writeFileSync(`${db}-new`, status("1.1.3-1"));
    renameSync(`${db}-new`, db);
    t.same(await nftVersionProbe.run(probeContext({ hostRoot: root, tools })), want("1.1.3", "1.1.3-1"));
    // Rewritten in place with the same size: the change time moves, so it is read again.
    await new Promise((r) => setTimeout(r, 20));
    writeFileSync(db, status("1.1.4-1"));
    t.same(await nftVersionProbe.run(probeContext({ hostRoot: root, tools })), want("1.1.4", "1.1.4-1"));
    // Garbage is never kept: the next scan reads again.
    writeFileSync(db, "this is not\na status file\n");
    const g = await nftVersionProbe.run(probeContext({ hostRoot: root, tools }));
    t.same(!g.ok && g.error.kind, "garbage");
  },
);

t.test("nft-version: with hostRoot / the host's own package database still comes first", async (t) => {
  const tools = nftTool(t, "nftables v9.9.9 (Stand-in)");
  const real = await nftVersionProbe.run(probeContext({ hostRoot: "/", tools }));
  t.same(real.ok && [real.facts.source, real.facts.version], ["dpkg", "1.0.6"]);
});
// The exec path (hostRoot "/" without a package database) runs in test/kernel/host-netns.test.ts,
// under a mount namespace that hides /var/lib/dpkg.
