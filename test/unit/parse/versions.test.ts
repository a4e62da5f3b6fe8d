import t from "tap";
import { readFileSync } from "node:fs";
import { parseKernelRelease } from "../../../agent/parse/versions.js";

t.test("recorded /proc/sys/kernel/osrelease", async (t) => {
  const text = readFileSync(
    new URL("../../fixtures/host/proc/sys/kernel/osrelease", import.meta.url),
    "utf8",
  );
  const r = parseKernelRelease(text);
  t.ok(r.ok);
  if (r.ok) {
    t.equal(r.value.release, text.trim());
    t.ok(r.value.major >= 5);
  }
});

t.test("distro release strings", async (t) => {
  t.same(parseKernelRelease("5.4.0-216-generic\n"), {
    ok: true,
    value: { release: "5.4.0-216-generic", major: 5, minor: 4, patch: 0 },
  });
  t.same(parseKernelRelease("5.15.0-139-generic"), {
    ok: true,
    value: { release: "5.15.0-139-generic", major: 5, minor: 15, patch: 0 },
  });
  t.same(parseKernelRelease("6.1"), { ok: true, value: { release: "6.1", major: 6, minor: 1, patch: 0 } });
});

t.test("garbage is a typed error", async (t) => {
  for (const bad of ["", "linux", "\u0000\u0001", "6.1.0\n6.2.0"]) {
    const r = parseKernelRelease(bad);
    t.equal(r.ok, false, JSON.stringify(bad));
  }
});
