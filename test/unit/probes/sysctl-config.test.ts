import t from "tap";
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { SysctlConfigFacts } from "../../../agent/facts/sysctl-config.js";
import { sysctlConfigProbe } from "../../../agent/probes/sysctl-config.js";
import { fixture, probeContext, tree } from "../../helpers/probe-context.js";

// The probe over the host trees in test/fixtures/sysctl (see the README there).
const run = (hostRoot: string) => sysctlConfigProbe.run(probeContext({ hostRoot }));
const forward = async (scenario: string) => {
  const r = await run(fixture(`sysctl/${scenario}`));
  if (!r.ok) throw new Error(JSON.stringify(r.error));
  SysctlConfigFacts.parse(r.facts);
  return r.facts;
};

t.test("debian-12 as shipped: every file read, nothing sets IPv4 forwarding", async (t) => {
  const f = await forward("debian-12");
  t.same(f.settings, [
    {
      name: "net.ipv4.ip_forward",
      keys: ["net.ipv4.ip_forward", "net.ipv4.conf.all.forwarding"],
      value: null,
      source: null,
    },
  ]);
  t.same(
    f.files.map((x) => x.path),
    [
      "/usr/lib/sysctl.d/50-pid-max.conf",
      "/usr/lib/sysctl.d/99-protect-links.conf",
      "/etc/sysctl.d/99-sysctl.conf",
      "/etc/sysctl.conf",
    ],
    "boot order; README.sysctl is no .conf; /lib/sysctl.d (a link to usr/lib) adds no name",
  );
  t.ok(f.files.every((x) => x.read));
});

t.test("the scenarios: what a reboot leaves, and which file says so", async (t) => {
  t.match((await forward("kubeadm")).settings[0], {
    value: "1",
    source: { path: "/etc/sysctl.d/k8s.conf", line: 1 },
  });
  t.match((await forward("hardened")).settings[0], {
    value: "1",
    source: { path: "/etc/sysctl.d/k8s.conf" },
  });
  t.match((await forward("zeroed")).settings[0], {
    value: "0",
    source: { path: "/etc/sysctl.conf", line: 28, key: "net.ipv4.ip_forward" },
  });
  const masked = await forward("masked");
  t.equal(masked.settings[0]!.value, null, "the vendor file is masked by /etc's link to /dev/null");
  t.match(
    masked.files.find((x) => x.path === "/etc/sysctl.d/60-forward.conf"),
    { read: true, masked: true },
  );
  t.notOk(
    masked.files.some((x) => x.path === "/usr/lib/sysctl.d/60-forward.conf"),
    "the masked file is not read",
  );
  t.match((await forward("glob")).settings[0], { value: "1", source: { key: "net.ipv4.conf.*.forwarding" } });
});

t.test("no configuration at all (an empty host root): read, nothing set", async (t) => {
  const r = await run(tree(t, {}));
  t.same(r, {
    ok: true,
    facts: {
      files: [],
      settings: [
        {
          name: "net.ipv4.ip_forward",
          keys: ["net.ipv4.ip_forward", "net.ipv4.conf.all.forwarding"],
          value: null,
          source: null,
        },
      ],
    },
  });
});

t.test("a file or directory that cannot be read is unread, never 'not set'", async (t) => {
  const root = tree(t, { etc: { "sysctl.d": { "10-a.conf": "net.ipv4.ip_forward = 1\n" } } });
  // A FIFO where a file should be (refused without blocking), and a directory named like a file.
  mkdirSync(join(root, "usr/lib/sysctl.d"), { recursive: true });
  execFileSync("/usr/bin/mkfifo", [join(root, "usr/lib/sysctl.d/20-fifo.conf")]);
  mkdirSync(join(root, "run/sysctl.d/30-dir.conf"), { recursive: true });
  const r = await run(root);
  if (!r.ok) return t.fail(JSON.stringify(r.error));
  const unread = r.facts.files.filter((x) => !x.read).map((x) => x.path);
  t.same(unread, ["/usr/lib/sysctl.d/20-fifo.conf", "/run/sysctl.d/30-dir.conf"]);
  const { unreadParts } = await import("../../../agent/facts/unread.js");
  const { emptyFacts } = await import("../../helpers/facts.js");
  t.match(unreadParts(emptyFacts({ sysctlConfig: r.facts })), [
    { probe: "sysctl-config", part: "/usr/lib/sysctl.d/20-fifo.conf", why: { kind: "io" } },
    { probe: "sysctl-config", part: "/run/sysctl.d/30-dir.conf", why: { kind: "io" } },
  ]);
});

t.test("an absolute link is resolved under the host root, not in the agent's filesystem", async (t) => {
  const root = tree(t, {
    etc: { "sysctl.d": {} },
    opt: { "forward.conf": "net.ipv4.ip_forward = 1\n" },
  });
  const { symlinkSync } = await import("node:fs");
  symlinkSync("/opt/forward.conf", join(root, "etc/sysctl.d/90-forward.conf"));
  const r = await run(root);
  if (!r.ok) return t.fail(JSON.stringify(r.error));
  t.match(r.facts.settings[0], { value: "1", source: { path: "/etc/sysctl.d/90-forward.conf" } });
});

// At boot a systemd host applies sysctl.d(5) with systemd-sysctl, which reads only the sysctl.d directories:
// /etc/sysctl.conf counts where a sysctl.d entry links it in (Debian 12, Ubuntu and Fedora ship
// /etc/sysctl.d/99-sysctl.conf -> ../sysctl.conf), at that entry's place in the name order, and not at all
// where nothing does (Debian 13 ships neither). procps `sysctl --system` (an init without systemd) reads it
// after every directory. The systemd-sysctl binary here is an empty stand-in: only its presence is read.
const SYSTEMD = { usr: { lib: { systemd: { "systemd-sysctl": "" } } } };
t.test("systemd-sysctl: /etc/sysctl.conf only where sysctl.d links it, at the link's place", async (t) => {
  const { symlinkSync } = await import("node:fs");
  const linked = tree(t, {
    ...SYSTEMD,
    etc: {
      "sysctl.conf": "net.ipv4.ip_forward=0\n",
      "sysctl.d": { "k8s.conf": "net.ipv4.ip_forward = 1\n" },
    },
  });
  symlinkSync("../sysctl.conf", join(linked, "etc/sysctl.d/99-sysctl.conf"));
  const a = await run(linked);
  if (!a.ok) return t.fail(JSON.stringify(a.error));
  t.match(
    a.facts.settings[0],
    { value: "1", source: { path: "/etc/sysctl.d/k8s.conf" } },
    "99-sysctl.conf sorts first",
  );
  t.same(
    a.facts.files.map((x) => x.path),
    ["/etc/sysctl.d/99-sysctl.conf", "/etc/sysctl.d/k8s.conf"],
    "not read a second time after the directories",
  );
  const unlinked = tree(t, {
    ...SYSTEMD,
    etc: { "sysctl.conf": "net.ipv4.ip_forward = 1\n", "sysctl.d": {} },
  });
  const b = await run(unlinked);
  if (!b.ok) return t.fail(JSON.stringify(b.error));
  t.equal(
    b.facts.settings[0]!.value,
    null,
    "Debian 13: systemd-sysctl never reads an unlinked /etc/sysctl.conf",
  );
  // Without systemd-sysctl, procps' order: /etc/sysctl.conf after every directory.
  const procps = tree(t, { etc: { "sysctl.conf": "net.ipv4.ip_forward = 1\n", "sysctl.d": {} } });
  const c = await run(procps);
  if (!c.ok) return t.fail(JSON.stringify(c.error));
  t.match(c.facts.settings[0], { value: "1", source: { path: "/etc/sysctl.conf" } });
});
