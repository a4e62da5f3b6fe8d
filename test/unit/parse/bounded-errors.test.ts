// Regressions found by the parser fuzz test (test/unit/parse/fuzz.test.ts): an error message must not
// quote unbounded input (a 10 MB set name became a 10 MB error in /report), and a number too large for
// the field the kernel prints must be a parse error, not Infinity or an unsafe integer that makes the
// probe's facts fail their own schema.
import t, { type Test } from "tap";
import { parseIpsetTerse } from "../../../agent/parse/ipset-list.js";
import { parseIptablesSave } from "../../../agent/parse/iptables-save.js";
import { parseIpvsProc } from "../../../agent/parse/ipvs-proc.js";
import { parseIpvsadmTimeout } from "../../../agent/parse/ipvsadm-timeout.js";
import { parseKernelRelease } from "../../../agent/parse/versions.js";
import { parseConfigz } from "../../../agent/parse/kube-proxy-configz.js";
import { parseNftSets } from "../../../agent/parse/nft-json.js";

const long = "x".repeat(1_000_000);
const bounded = (t: Test, r: { ok: boolean; error?: string }, what: string) => {
  t.equal(r.ok, false, `${what}: an error`);
  t.ok((r.error ?? "").length < 500, `${what}: error of ${r.error?.length} characters`);
};

t.test("error messages quote at most a bounded excerpt of the input", async (t) => {
  bounded(t, parseIpsetTerse(`Name: ${long}\nType: hash:ip\n`), "ipset set name");
  bounded(t, parseIptablesSave(`*${long}\n`, "nft", "ipv4"), "iptables-save table at end of input");
  bounded(t, parseIptablesSave(`*${long}\n*nat\n`, "nft", "ipv4"), "iptables-save table not committed");
  bounded(
    t,
    parseNftSets(JSON.stringify({ nftables: [{ set: { family: "ip", table: "t", name: long, elem: 1 } }] })),
    "nft set name",
  );
  bounded(
    t,
    parseConfigz(JSON.stringify({ "kubeproxy.config.k8s.io": { mode: "ipvs", ipvs: { tcpTimeout: long } } })),
    "configz duration",
  );
  // Unchanged for ordinary names: the table is still named as it was.
  t.match(parseIptablesSave("*nat\n", "nft", "ipv4"), { error: /ends inside table \*nat/ });
});

const nines = (n: number) => "9".repeat(n);

t.test("numbers wider than the kernel's field are errors, not Infinity", async (t) => {
  t.equal(parseKernelRelease(`${nines(400)}.1.0`).ok, false, "kernel major");
  t.equal(parseIpvsadmTimeout(`Timeout (tcp tcpfin udp): ${nines(400)} 120 300\n`).ok, false, "ipvsadm");
  t.equal(
    parseIpsetTerse(
      `Name: S\nType: hash:ip\nRevision: 6\nHeader: family inet\nSize in memory: ${nines(21)}\nReferences: 0\nNumber of entries: 1\n`,
    ).ok,
    false,
    "ipset size",
  );
  const ipvs = (conns: string) =>
    [
      "IP Virtual Server version 1.2.1 (size=4096)",
      "Prot LocalAddress:Port Scheduler Flags",
      "  -> RemoteAddress:Port Forward Weight ActiveConn InActConn",
      "TCP  0A600001:01BB rr  ",
      `  -> 0AF40001:2710      Masq    1      ${conns}          0         `,
    ].join("\n");
  t.equal(parseIpvsProc(ipvs("3")).ok, true, "sanity: an ordinary table parses");
  t.equal(parseIpvsProc(ipvs(nines(400))).ok, false, "IPVS active connections");
  const save = (c: string) => `*filter\n:INPUT ACCEPT [0:0]\n[${c}:1] -A INPUT -j ACCEPT\nCOMMIT\n`;
  t.equal(parseIptablesSave(save("18446744073709551615"), "nft", "ipv4").ok, true, "u64 counters parse");
  t.equal(parseIptablesSave(save(nines(400)), "nft", "ipv4").ok, false, "400-digit counter");
});
