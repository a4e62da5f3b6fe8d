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
