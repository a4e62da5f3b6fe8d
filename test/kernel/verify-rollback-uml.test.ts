import t from "tap";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VerifyResult } from "../../common/verify-result.js";
import { bootUml, hostScratchDir, REPO_ROOT, umlRunsHere, umlUnavailableReason } from "../helpers/uml.js";

// `verify --expect-mode ipvs` after a rollback, on real IPVS in User-Mode Linux. One boot,
// one namespace per scenario (verify-rollback-uml-guest.sh): the data plane whole again, kube-ipvs0
// missing a Service IP that IPVS serves, and nothing of ipvs mode's state at all. kube-proxy is the
// STAND-IN (test/standins/kube-proxy.ts) answering ipvs. Needs `npx tsc -p .`. UML's nftables has no ip
// family, so the leftover-table line is tried in verify-nodeport-netns.test.ts's kernel instead.
t.setTimeout(1_200_000);

const skip = umlUnavailableReason();
if (skip !== null) t.fail(`User-Mode Linux is needed for this test and does not skip silently: ${skip}`);
else if (umlRunsHere(t)) {
  const scratch = hostScratchDir("proxyscope-rollback-");
  t.teardown(scratch.remove);
  writeFileSync(
    join(scratch.path, "ipvs.json"),
    JSON.stringify({
      mode: "ipvs",
      version: "v1.34.0",
      metricsAddress: "127.0.0.1:0",
      healthAddress: "127.0.0.1:0",
      lastSync: { agoSeconds: 3 },
      lastQueued: { agoSeconds: 3 },
      healthy: true,
    }),
  );
  const boot = await bootUml({
    script: readFileSync(join(REPO_ROOT, "test/kernel/verify-rollback-uml-guest.sh"), "utf8"),
    env: { PROXYSCOPE_OUT: scratch.path },
    memMb: 768,
    timeoutMs: 1_000_000,
  });
  const file = (name: string) => readFileSync(join(scratch.path, name), "utf8");
  const result = (ns: string) => VerifyResult.parse(JSON.parse(file(`${ns}.verify.out`)));
  const line = (v: VerifyResult, id: string) => v.checks.find((c) => c.id === id);

  t.match(boot.output, /guest-done/, "the guest script ran to the end", { output: boot.output.slice(-3000) });
  t.same(boot.modulesFailed, [], "every module loaded");

  t.test("the data plane is back: each rollback line passes", async (t) => {
    t.match(file("back.ipvsadm"), /TCP {2}10\.96\.0\.1:443/, "the IPVS table is the real thing");
    const v = result("back");
    t.equal(line(v, "proxy-mode")?.status, "ok", "kube-proxy answers ipvs, as expected");
    t.equal(line(v, "ipvs-virtual-servers-present")?.status, "ok");
    t.match(line(v, "ipvs-virtual-servers-present")?.detail ?? "", /^5 virtual servers, 5 with real servers/);
    const k = line(v, "kube-ipvs0-service-ips");
    t.equal(k?.status, "ok", k?.detail ?? "");
    t.match(k?.detail ?? "", /^3 of 3 Service IPs IPVS serves are on kube-ipvs0/);
    // ipvs mode: a NodePort virtual server on each address.
    t.equal(line(v, "nodeport-addresses")?.status, "ok", line(v, "nodeport-addresses")?.detail ?? "");
    for (const gone of ["ipvs-virtual-servers", "kube-ipvs0", "kube-proxy-ipsets", "service-parity"])
      t.notOk(line(v, gone), `${gone} (a line of the switch to nftables) is not asked after a rollback`);
    t.equal(line(v, "nftables-table-left")?.status, "ok", "no kube-proxy nftables table is left");
  });

  t.test("kube-ipvs0 lacks a Service IP IPVS serves: that line fails and names it", async (t) => {
    t.notMatch(file("gap.kube-ipvs0"), /10\.96\.0\.10/, "really missing from kube-ipvs0");
    t.match(file("gap.ipvsadm"), /UDP {2}10\.96\.0\.10:53/, "and really in IPVS");
    t.equal(Number(file("gap.verify.rc").trim()), 1, "verify fails");
    const v = result("gap");
    const k = line(v, "kube-ipvs0-service-ips");
    t.equal(k?.status, "fail");
    t.match(k?.detail ?? "", /^2 of 3 Service IPs IPVS serves are on kube-ipvs0; missing: 10\.96\.0\.10$/);
    t.equal(line(v, "ipvs-virtual-servers-present")?.status, "ok");
    t.equal(line(v, "proxy-mode")?.status, "ok");
    const np = line(v, "nodeport-addresses");
    t.equal(np?.status, "fail");
    t.match(np?.detail ?? "", /not served: 192\.168\.78\.2 \(eth2\): no NodePort virtual server/);
  });

  t.test("kube-proxy answers ipvs but nothing of ipvs mode is there: each line fails", async (t) => {
    const v = result("empty");
    t.equal(line(v, "proxy-mode")?.status, "ok");
    t.equal(line(v, "ipvs-virtual-servers-present")?.status, "fail");
    t.match(line(v, "ipvs-virtual-servers-present")?.detail ?? "", /no IPVS virtual servers/);
    t.equal(line(v, "kube-ipvs0-service-ips")?.status, "fail");
    t.match(line(v, "kube-ipvs0-service-ips")?.detail ?? "", /kube-ipvs0 absent/);
    t.equal(v.passed, false);
  });
}
