import t from "tap";
import { chmodSync, cpSync, mkdirSync, mkdtempSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ToolRunner } from "../../../agent/io/run.js";
import { kernelModulesProbe } from "../../../agent/probes/kernel-modules.js";
import { nftVersionProbe } from "../../../agent/probes/nft-version.js";
import { osReleaseProbe } from "../../../agent/probes/os-release.js";
import { sysctlsProbe } from "../../../agent/probes/sysctls.js";
import type { ProbeContext } from "../../../agent/probes/types.js";

type Tree = { [name: string]: string | Tree };
/** A fresh temp directory holding `spec` (tap's t.testdir() is one directory per test, reset on each call). */
function tree(spec: Tree = {}, dir = mkdtempSync(join(tmpdir(), "proxyscope-"))): string {
  for (const [name, v] of Object.entries(spec)) {
    if (typeof v === "string") writeFileSync(join(dir, name), v);
    else {
      mkdirSync(join(dir, name), { recursive: true });
      tree(v, join(dir, name));
    }
  }
  return dir;
}

const fx = (rel: string) => fileURLToPath(new URL(`../../fixtures/${rel}`, import.meta.url));

function ctx(over: Partial<ProbeContext> = {}): ProbeContext {
  return {
    hostRoot: fx("host"),
    procRoot: fx("host/proc"),
    sysRoot: fx("host/sys"),
    tools: new ToolRunner([fx("no-such-tool-dir")]),
    kubeProxyMetricsUrl: "http://127.0.0.1:1/",
    kubeProxyHealthUrl: "http://127.0.0.1:1/",
    nodeIPs: [],
    callTimeoutMs: 5000,
    prior: {},
    ...over,
  };
}

/** A directory of small executables standing in for real tools, printing recorded output. */
function toolDir(scripts: Record<string, string>): string {
  const dir = tree();
  for (const [name, body] of Object.entries(scripts)) {
    writeFileSync(`${dir}/${name}`, `#!/bin/sh\n${body}\n`);
    chmodSync(`${dir}/${name}`, 0o755);
  }
  return dir;
}

t.test("os-release: /etc first, /usr/lib as fallback, never the container's own", async (t) => {
  t.same(await osReleaseProbe.run(ctx({ hostRoot: fx("os-release/ubuntu-20.04") })), {
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
  const root = tree();
  mkdirSync(`${root}/usr/lib`, { recursive: true });
  cpSync(fx("host/usr/lib/os-release"), `${root}/usr/lib/os-release`);
  const r = await osReleaseProbe.run(ctx({ hostRoot: root }));
  t.equal(r.ok && r.facts.source, "/usr/lib/os-release");
  t.equal(r.ok && r.facts.versionCodename, "bookworm");

  const empty = await osReleaseProbe.run(ctx({ hostRoot: tree() }));
  t.equal(!empty.ok && empty.error.kind, "io");

  const bad = tree({ etc: { "os-release": "<html>502 Bad Gateway</html>\n" } });
  const g = await osReleaseProbe.run(ctx({ hostRoot: bad }));
  t.same(!g.ok && [g.error.kind, g.error.command], ["garbage", `${bad}/etc/os-release`]);
});

t.test("nft-version: host dpkg database wins, no exec under a mounted host root", async (t) => {
  const tools = new ToolRunner([toolDir({ nft: "echo 'nftables v9.9.9 (image, not host)'" })]);
  t.same(await nftVersionProbe.run(ctx({ tools })), {
    ok: true,
    facts: { version: "1.0.6", source: "dpkg", detail: "nftables 1.0.6-2+deb12u2" },
  });

  const apkRoot = tree({
    lib: { apk: { db: { installed: "P:musl\nV:1.2.5-r0\n\nP:nftables\nV:1.0.9-r2\n\n" } } },
  });
  t.same(await nftVersionProbe.run(ctx({ hostRoot: apkRoot, tools })), {
    ok: true,
    facts: { version: "1.0.9", source: "apk", detail: "nftables 1.0.9-r2" },
  });

  const rpmRoot = tree({ var: { lib: { rpm: { "rpmdb.sqlite": "SQLite format 3\u0000" } } } });
  const rpm = await nftVersionProbe.run(ctx({ hostRoot: rpmRoot, tools }));
  t.equal(rpm.ok && rpm.facts.source, "none");
  t.equal(rpm.ok && rpm.facts.version, null);
  t.match(rpm.ok && rpm.facts.detail, /RPM database .*rpmdb\.sqlite/);

  const noDb = await nftVersionProbe.run(ctx({ hostRoot: tree(), tools }));
  t.same(noDb.ok && [noDb.facts.version, noDb.facts.source], [null, "none"]);

  const noNft = tree({
    var: {
      lib: { dpkg: { status: "Package: iproute2\nStatus: install ok installed\nVersion: 6.1.0-3\n\n" } },
    },
  });
  t.same(await nftVersionProbe.run(ctx({ hostRoot: noNft, tools })), {
    ok: true,
    facts: {
      version: null,
      source: "dpkg",
      detail: "the host's dpkg database has no nftables package installed",
    },
  });

  const garbage = tree({ var: { lib: { dpkg: { status: "this is not\na status file\n" } } } });
  const g = await nftVersionProbe.run(ctx({ hostRoot: garbage, tools }));
  t.same(!g.ok && g.error.kind, "garbage");
});

t.test(
  "nft-version: the answer kept for an unchanged package database is the same; a changed one is read again",
  async (t) => {
    const tools = new ToolRunner([fx("no-such-tool-dir")]);
    const status = (v: string) => `Package: nftables\nStatus: install ok installed\nVersion: ${v}\n\n`;
    const root = tree({ var: { lib: { dpkg: { status: status("1.0.6-2") } } } });
    const db = join(root, "var/lib/dpkg/status");
    const want = (v: string, d: string) => ({
      ok: true,
      facts: { version: v, source: "dpkg", detail: `nftables ${d}` },
    });
    t.same(await nftVersionProbe.run(ctx({ hostRoot: root, tools })), want("1.0.6", "1.0.6-2"));
    t.same(
      await nftVersionProbe.run(ctx({ hostRoot: root, tools })),
      want("1.0.6", "1.0.6-2"),
      "kept answer",
    );
    // dpkg writes status-new and renames it over status: a new inode, so a new answer.
    writeFileSync(`${db}-new`, status("1.1.3-1"));
    renameSync(`${db}-new`, db);
    t.same(await nftVersionProbe.run(ctx({ hostRoot: root, tools })), want("1.1.3", "1.1.3-1"));
    // Rewritten in place with the same size: the change time moves, so it is read again.
    await new Promise((r) => setTimeout(r, 20));
    writeFileSync(db, status("1.1.4-1"));
    t.same(await nftVersionProbe.run(ctx({ hostRoot: root, tools })), want("1.1.4", "1.1.4-1"));
    // Garbage is never kept: the next scan reads again.
    writeFileSync(db, "this is not\na status file\n");
    const g = await nftVersionProbe.run(ctx({ hostRoot: root, tools }));
    t.same(!g.ok && g.error.kind, "garbage");
  },
);

t.test("nft-version: with hostRoot / the host's own package database still comes first", async (t) => {
  const tools = new ToolRunner([toolDir({ nft: "echo 'nftables v9.9.9 (Stand-in)'" })]);
  const real = await nftVersionProbe.run(ctx({ hostRoot: "/", tools }));
  t.same(real.ok && [real.facts.source, real.facts.version], ["dpkg", "1.0.6"]);
});
// The exec path (hostRoot "/" without a package database) runs in test/kernel/host-netns.test.ts,
// under a mount namespace that hides /var/lib/dpkg.

t.test("kernel-modules: UML 6.1 tree with modules loaded", async (t) => {
  const kernel = { ok: true as const, facts: { release: "6.1.176", major: 6, minor: 1, patch: 176 } };
  const r = await kernelModulesProbe.run(
    ctx({ hostRoot: fx("uml-6.1"), procRoot: fx("uml-6.1/proc"), prior: { kernel } }),
  );
  t.same(r, {
    ok: true,
    facts: {
      moduleTreeReadable: true,
      modules: [
        { name: "nf_tables", state: "loaded" },
        { name: "nf_nat", state: "loaded" },
        { name: "nft_chain_nat", state: "absent" },
        { name: "nft_ct", state: "loaded" },
        { name: "nft_nat", state: "absent" },
        { name: "nft_masq", state: "loaded" },
        { name: "nft_numgen", state: "loaded" },
        { name: "nft_fib", state: "absent" },
        { name: "nft_fib_ipv4", state: "absent" },
        { name: "nft_fib_ipv6", state: "absent" },
        { name: "nft_reject", state: "loaded" },
        { name: "nft_reject_ipv4", state: "absent" },
        { name: "nft_reject_ipv6", state: "absent" },
      ],
    },
  });

  // Nothing loaded (this machine has no /proc/modules): what the tree offers is "available".
  const idle = await kernelModulesProbe.run(
    ctx({ hostRoot: fx("uml-6.1"), procRoot: fx("host/proc"), prior: { kernel } }),
  );
  t.same(idle.ok && idle.facts.modules.filter((m) => m.state === "available").map((m) => m.name), [
    "nf_tables",
    "nf_nat",
    "nft_ct",
    "nft_masq",
    "nft_numgen",
    "nft_reject",
  ]);

  const builtinRoot = tree({
    lib: {
      modules: { "6.1.176": { "modules.builtin": "kernel/net/netfilter/nf_tables.ko\n", "modules.dep": "" } },
    },
  });
  const b = await kernelModulesProbe.run(
    ctx({ hostRoot: builtinRoot, procRoot: fx("host/proc"), prior: { kernel } }),
  );
  t.equal(b.ok && b.facts.modules[0]?.state, "builtin");
});

t.test("kernel-modules: no module tree, or no kernel release, means moduleTreeReadable false", async (t) => {
  const kernel = { ok: true as const, facts: { release: "6.18.44-fc-v595", major: 6, minor: 18, patch: 44 } };
  const r = await kernelModulesProbe.run(ctx({ prior: { kernel } }));
  t.same(r.ok && [r.facts.moduleTreeReadable, [...new Set(r.facts.modules.map((m) => m.state))]], [
    false,
    ["absent"],
  ]);
  const failed = { ok: false as const, error: { kind: "io" as const, message: "x" } };
  const noRelease = await kernelModulesProbe.run(
    ctx({ hostRoot: fx("uml-6.1"), procRoot: fx("uml-6.1/proc"), prior: { kernel: failed } }),
  );
  t.same(noRelease.ok && [noRelease.facts.moduleTreeReadable, noRelease.facts.modules[0]?.state], [
    false,
    "loaded",
  ]);
  const garbage = tree({ modules: "<html>\n" });
  const g = await kernelModulesProbe.run(ctx({ procRoot: garbage, prior: { kernel } }));
  t.same(!g.ok && [g.error.kind, g.error.command], ["garbage", `${garbage}/modules`]);
});

t.test("sysctls: values, null for absent files", async (t) => {
  const proc = tree({
    sys: {
      net: {
        ipv4: {
          conf: { all: { arp_ignore: "1\n", arp_announce: "2\n", route_localnet: "0\n" } },
          ip_forward: "1\n",
        },
        netfilter: { nf_conntrack_tcp_be_liberal: "0\n" },
      },
    },
  });
  t.same(await sysctlsProbe.run(ctx({ procRoot: proc })), {
    ok: true,
    facts: {
      values: [
        { name: "net.ipv4.conf.all.arp_ignore", value: "1" },
        { name: "net.ipv4.conf.all.arp_announce", value: "2" },
        { name: "net.ipv4.conf.all.route_localnet", value: "0" },
        { name: "net.ipv4.ip_forward", value: "1" },
        { name: "net.netfilter.nf_conntrack_tcp_be_liberal", value: "0" },
        { name: "net.ipv4.vs.conntrack", value: null },
        { name: "net.ipv4.vs.expire_nodest_conn", value: null },
        { name: "net.ipv4.vs.expire_quiescent_template", value: null },
      ],
    },
  });
});
