import t from "tap";
import {
  keyMatches,
  orderSysctlFiles,
  parseSysctlConf,
  persistentSetting,
} from "../../../agent/parse/sysctl-conf.js";

const KEYS = ["net.ipv4.ip_forward", "net.ipv4.conf.all.forwarding"];

t.test("lines as systemd-sysctl reads them", async (t) => {
  const a = parseSysctlConf(
    [
      "# comment",
      "; comment too",
      "",
      "net.ipv4.ip_forward = 1",
      "-net/ipv4/conf/all/forwarding=0",
      "not an assignment",
      "!net.ipv4.conf.lo.forwarding",
      "net.ipv4.conf.*.rp_filter = 2",
    ].join("\n"),
  );
  t.same(
    a.map((x) => [x.key, x.value, x.exclude, x.line]),
    [
      ["net.ipv4.ip_forward", "1", false, 4],
      ["net.ipv4.conf.all.forwarding", "0", false, 5],
      ["net.ipv4.conf.lo.forwarding", "", true, 7],
      ["net.ipv4.conf.*.rp_filter", "2", false, 8],
    ],
  );
});

t.test("globs", async (t) => {
  t.ok(keyMatches("net.ipv4.conf.*.forwarding", "net.ipv4.conf.all.forwarding"));
  t.notOk(keyMatches("net.ipv4.conf.*.forwarding", "net.ipv4.ip_forward"));
  t.ok(keyMatches("net.ipv4.ip_forwar?", "net.ipv4.ip_forward"));
  t.ok(keyMatches("net.ipv4.conf.[al]ll.forwarding", "net.ipv4.conf.all.forwarding"));
  t.notOk(keyMatches("net.ipv4.ip.forward", "net.ipv4.ip_forward"), "a dot is no wildcard");
});

t.test("order: by file name across directories; /etc hides the same name elsewhere", async (t) => {
  const order = orderSysctlFiles(
    new Map([
      ["/usr/lib/sysctl.d", ["50-default.conf", "60-forward.conf", "README"]],
      ["/etc/sysctl.d", ["60-forward.conf", "k8s.conf", "99-sysctl.conf"]],
      ["/run/sysctl.d", ["70-run.conf"]],
    ]),
  );
  t.same(order, [
    "/usr/lib/sysctl.d/50-default.conf",
    "/etc/sysctl.d/60-forward.conf",
    "/run/sysctl.d/70-run.conf",
    "/etc/sysctl.d/99-sysctl.conf",
    "/etc/sysctl.d/k8s.conf",
  ]);
});

t.test("the last write of either name of the knob wins", async (t) => {
  const f = (path: string, text: string) => ({ path, assignments: parseSysctlConf(text) });
  t.equal(persistentSetting([], KEYS), null, "nothing assigns it: null, the kernel default stays");
  t.match(
    persistentSetting(
      [f("/a.conf", "net.ipv4.ip_forward=1"), f("/b.conf", "net.ipv4.conf.all.forwarding = 0")],
      KEYS,
    ),
    { value: "0", path: "/b.conf", key: "net.ipv4.conf.all.forwarding", line: 1 },
  );
  t.match(persistentSetting([f("/a.conf", "net.ipv4.conf.*.forwarding = 1")], KEYS), { value: "1" });
  t.equal(
    persistentSetting([f("/a.conf", "!net.ipv4.conf.all.forwarding\nnet.ipv4.conf.*.forwarding = 1")], KEYS),
    null,
    "an excluded key is not set by a glob",
  );
});
