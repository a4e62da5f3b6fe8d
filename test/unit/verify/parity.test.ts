import t from "tap";
import type { NodeFacts } from "../../../agent/report/schema.js";
import { verifyChecks } from "../../../agent/verify/checks.js";
import { checkFails } from "../../../common/verify-result.js";
import { reportOf } from "../../helpers/reports.js";
import { emptyFacts, metrics, noKernelState } from "../../helpers/facts.js";
import { NOW } from "../../helpers/rules.js";

// Parity: verify's parity line. Lost Services fail it; a snapshot that cannot be compared is named, never
// passed as "nothing lost"; a corrupt one or an unread probe fails the verification.
const PATH = "/var/lib/proxyscope/ipvs-snapshot.json";
function parityCheck(parity: NodeFacts["parity"]) {
  const report = reportOf(
    emptyFacts({ ...noKernelState, proxyMode: { mode: "nftables" }, kubeProxyMetrics: metrics({}), parity }),
    {},
    new Date(NOW * 1000),
  );
  const checks = verifyChecks({ report, second: null, syncWindowS: 0, connect: { kind: "skipped" } });
  return checks.find((c) => c.id === "service-parity")!;
}
const compared = (missingAfter: number): NodeFacts["parity"] => ({
  state: "compared",
  path: PATH,
  takenAt: NOW - 7200,
  ageSeconds: 7200,
  maxAgeSeconds: 86_400,
  counts: { same: 9, missingAfter, endpointsDiffer: 1, newAfter: 0 },
  services: [],
  truncated: false,
});

t.test("nothing lost passes, with the counts and the snapshot's age", async (t) => {
  const c = parityCheck(compared(0));
  t.equal(c.status, "ok");
  t.match(c.detail, /9 same, 0 missing after, 1 with other endpoints, 0 new \(snapshot 2\.0 h old\)/);
});

t.test("a lost Service fails", async (t) => {
  t.equal(parityCheck(compared(2)).status, "fail");
});

t.test("stale, absent, off: named, not compared, not counted as lost", async (t) => {
  const stale = parityCheck({
    state: "stale",
    path: PATH,
    takenAt: 0,
    ageSeconds: 200_000,
    maxAgeSeconds: 86_400,
  });
  t.equal(stale.status, "skipped");
  t.match(stale.detail, /stale: taken 55\.6 h ago, over the 24\.0 h limit/);
  t.match(parityCheck({ state: "no-snapshot", path: PATH }).detail, /no snapshot at/);
  t.match(parityCheck({ state: "off" }).detail, /--parity-snapshot/);
});

t.test("a corrupt snapshot or an unread probe fails the verification", async (t) => {
  t.ok(checkFails(parityCheck({ state: "corrupt", path: PATH, why: "not JSON (cut short?)" })));
  t.ok(checkFails(parityCheck(null)));
});

t.test("addresses IPVS reached only by ARP are named, not passed over as same", async (t) => {
  const p = compared(0);
  if (p?.state !== "compared") return t.fail();
  const c = parityCheck({ ...p, counts: { ...p.counts, arpOnly: 2 } });
  t.match(c.detail, /2 reachable only by ARP from kube-ipvs0 before \(no one answers ARP now\)/);
  const u = parityCheck({ ...p, arpNotRead: "the sysctls were not read" });
  t.match(u.detail, /ARP-only addresses not known \(the sysctls were not read\)/);
});
