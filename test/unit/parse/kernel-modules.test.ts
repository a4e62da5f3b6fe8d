import t from "tap";
import { readFileSync } from "node:fs";
import {
  parseModulesBuiltin,
  parseModulesDep,
  parseProcModules,
} from "../../../agent/parse/kernel-modules.js";

const read = (rel: string) => readFileSync(new URL(`../../fixtures/${rel}`, import.meta.url), "utf8");

t.test("recorded /proc/modules (UML 6.1 after modprobe)", async (t) => {
  const r = parseProcModules(read("uml-6.1/proc/modules"));
  t.ok(r.ok);
  if (r.ok) {
    t.same([...r.value].sort(), [
      "nf_conntrack",
      "nf_defrag_ipv4",
      "nf_defrag_ipv6",
      "nf_nat",
      "nf_tables",
      "nfnetlink",
      "nft_ct",
      "nft_masq",
      "nft_numgen",
      "nft_reject",
    ]);
  }
});

t.test("recorded modules.builtin and modules.dep (UML 6.1)", async (t) => {
  const b = parseModulesBuiltin(read("uml-6.1/lib/modules/6.1.176/modules.builtin"));
  const d = parseModulesDep(read("uml-6.1/lib/modules/6.1.176/modules.dep"));
  t.ok(b.ok && d.ok);
  if (b.ok && d.ok) {
    t.equal(b.value.size, 101);
    t.ok(b.value.has("unix") && b.value.has("af_packet"));
    t.notOk(b.value.has("nf_tables"));
    t.equal(d.value.size, 910);
    for (const m of ["nf_tables", "nft_ct", "nft_masq", "nft_reject", "nft_numgen", "nf_nat", "ip_vs"]) {
      t.ok(d.value.has(m), m);
    }
    t.notOk(d.value.has("nft_fib_ipv4"));
  }
});

t.test("compressed module files and dashes", async (t) => {
  const d = parseModulesDep(
    "kernel/net/netfilter/nft_ct.ko.zst: kernel/net/netfilter/nf_tables.ko.zst\nkernel/x/foo-bar.ko.xz:\n",
  );
  t.same(d.ok && [...d.value].sort(), ["foo_bar", "nft_ct"]);
});

t.test("empty, garbage, truncated", async (t) => {
  t.same(parseProcModules(""), { ok: true, value: new Set() });
  t.equal(parseProcModules("nf_tables\n").ok, false);
  t.equal(parseProcModules("<html>hello there</html>").ok, false);
  t.equal(parseModulesBuiltin("not a path\n").ok, false);
  t.equal(parseModulesDep("kernel/net/netfilter/nf_tables.ko\n").ok, false);
  const dep = read("uml-6.1/lib/modules/6.1.176/modules.dep");
  // cut inside a module path, before its colon, as a short read would
  t.equal(parseModulesDep(dep.slice(0, dep.indexOf("\nkernel/net/netfilter/nft_ct.ko") + 20)).ok, false);
  t.equal(parseModulesBuiltin("\u0000").ok, false);
});
