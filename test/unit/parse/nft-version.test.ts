import t from "tap";
import { readFileSync } from "node:fs";
import { findApkPackage } from "../../../agent/parse/apk-installed.js";
import { findDpkgPackage } from "../../../agent/parse/dpkg-status.js";
import { parseNftVersionOutput, upstreamVersion } from "../../../agent/parse/nft-version.js";
import { compareVersions } from "../../../agent/parse/versions.js";

const read = (rel: string) => readFileSync(new URL(`../../fixtures/${rel}`, import.meta.url), "utf8");

t.test("recorded dpkg status", async (t) => {
  const text = read("host/var/lib/dpkg/status");
  t.same(findDpkgPackage(text, "nftables"), {
    ok: true,
    value: { name: "nftables", version: "1.0.6-2+deb12u2" },
  });
  t.same(findDpkgPackage(text, "libnftables1"), {
    ok: true,
    value: { name: "libnftables1", version: "1.0.6-2+deb12u2" },
  });
  t.same(findDpkgPackage(text, "ipvsadm"), { ok: true, value: null });
});

t.test("a removed package whose config files remain is not installed", async (t) => {
  const text = read("host/var/lib/dpkg/status").replace(
    /(Package: nftables\nStatus: )install ok installed/,
    "$1deinstall ok config-files",
  );
  t.same(findDpkgPackage(text, "nftables"), { ok: true, value: null });
});

t.test("dpkg: empty, garbage, truncated", async (t) => {
  t.same(findDpkgPackage("", "nftables"), { ok: true, value: null });
  t.equal(findDpkgPackage("<html>\nnot a status file\n", "nftables").ok, false);
  t.equal(findDpkgPackage("Foo: bar\n\nBaz: qux\n", "nftables").ok, false);
  const text = read("host/var/lib/dpkg/status");
  const cut = text.slice(0, text.indexOf("Version: 1.0.6-2+deb12u2\nDepends: libnftables1"));
  t.same(findDpkgPackage(cut, "nftables"), {
    ok: false,
    error: "package nftables is installed but has no Version field",
  });
});

t.test("apk installed database", async (t) => {
  // Field layout from apk-tools' database format (P: package, V: version); no Alpine host to record from.
  const db = "C:Q1abc=\nP:musl\nV:1.2.5-r0\n\nC:Q1def=\nP:nftables\nV:1.0.9-r2\nA:x86_64\n\n";
  t.same(findApkPackage(db, "nftables"), { ok: true, value: { name: "nftables", version: "1.0.9-r2" } });
  t.same(findApkPackage(db, "iproute2"), { ok: true, value: null });
  t.same(findApkPackage("", "nftables"), { ok: true, value: null });
  t.equal(findApkPackage("garbage line\n", "nftables").ok, false);
  t.equal(findApkPackage("Q:x\n\nZ:y\n", "nftables").ok, false);
});

t.test("recorded nft --version", async (t) => {
  t.same(parseNftVersionOutput(read("tools/nft/version.txt")), { ok: true, value: "1.0.6" });
  for (const bad of ["", "nft: command not found", "nftables v", "\u0000"]) {
    t.equal(parseNftVersionOutput(bad).ok, false, JSON.stringify(bad));
  }
});

t.test("distro package versions compare as upstream versions", async (t) => {
  t.same(upstreamVersion("0.9.3-2"), { ok: true, value: "0.9.3" });
  t.same(upstreamVersion("1.0.2-1ubuntu3"), { ok: true, value: "1.0.2" });
  t.same(upstreamVersion("1.0.6-2+deb12u2"), { ok: true, value: "1.0.6" });
  t.same(upstreamVersion("1:1.1.3-1"), { ok: true, value: "1.1.3" });
  t.same(upstreamVersion("1.0.9-r2"), { ok: true, value: "1.0.9" });
  t.equal(upstreamVersion("").ok, false);
  t.equal(upstreamVersion("ubuntu").ok, false);
  t.equal(compareVersions("0.9.3", "1.0.1"), -1);
  t.equal(compareVersions("1.0.2", "1.0.1"), 1);
  t.equal(compareVersions("1.1.3", "1.1.3"), 0);
  t.equal(compareVersions("1.0.10", "1.0.9"), 1);
  t.equal(compareVersions("1.1", "1.1.0"), 0);
});
