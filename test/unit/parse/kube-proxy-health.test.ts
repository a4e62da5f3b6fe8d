import t from "tap";
import { readFileSync } from "node:fs";
import { parseKubeProxyHealth } from "../../../agent/parse/kube-proxy-health.js";

const recorded = (s: string, ep: string) =>
  readFileSync(new URL(`../../fixtures/kube-proxy/recorded/${s}/${ep}.json`, import.meta.url), "utf8");

t.test("v1.33+ shape: healthy node", async (t) => {
  const r = parseKubeProxyHealth(200, recorded("iptables-default-v1.33", "healthz"));
  t.ok(r.ok);
  if (!r.ok) return;
  t.equal(r.value.shape, "v1.33+");
  t.equal(r.value.healthy, true);
  t.equal(r.value.nodeEligible, true);
  t.match(r.value.lastUpdated, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
});

t.test("v1.33+ shape: 503 with healthy:true is a node being removed, not a broken proxier", async (t) => {
  const r = parseKubeProxyHealth(503, recorded("nftables-draining-v1.33", "healthz"));
  t.same(r.ok && { ...r.value, lastUpdated: null, currentTime: null }, {
    status: 503,
    shape: "v1.33+",
    healthy: true,
    lastUpdated: null,
    currentTime: null,
    nodeEligible: false,
  });
});

t.test("v1.33+ shape: an unhealthy proxier; /livez has no nodeEligible", async (t) => {
  const hz = parseKubeProxyHealth(503, recorded("nftables-failing-v1.37", "healthz"));
  t.ok(hz.ok && hz.value.healthy === false && hz.value.nodeEligible === true);
  const lz = parseKubeProxyHealth(503, recorded("nftables-failing-v1.37", "livez"));
  t.ok(lz.ok && lz.value.healthy === false && lz.value.nodeEligible === null);
});

t.test("legacy shape: Go time.String() times, kept verbatim", async (t) => {
  const r = parseKubeProxyHealth(200, recorded("ipvs-v1.31", "healthz"));
  t.ok(r.ok);
  if (!r.ok) return;
  t.equal(r.value.shape, "legacy");
  t.equal(r.value.healthy, true);
  t.equal(r.value.nodeEligible, true);
  t.match(r.value.currentTime, / \+0000 UTC m=[+-]\d+\.\d{9}$/);
});

t.test("legacy shape: 503 says nothing about the proxier when the node is ineligible", async (t) => {
  const r = parseKubeProxyHealth(503, recorded("iptables-draining-v1.31", "healthz"));
  t.ok(r.ok && r.value.shape === "legacy" && r.value.healthy === null && r.value.nodeEligible === false);
  const unhealthy = parseKubeProxyHealth(
    503,
    '{"lastUpdated": "2025-01-02 03:04:05.1 +0000 UTC m=+1.000000000","currentTime": "2025-01-02 03:09:05.1 +0000 UTC m=+301.000000000", "nodeEligible": true}',
  );
  t.ok(unhealthy.ok && unhealthy.value.healthy === false);
  const oldest = parseKubeProxyHealth(
    200,
    '{"lastUpdated": "2019-01-01 00:00:00 +0000 UTC","currentTime": "2019-01-01 00:00:01 +0000 UTC"}',
  );
  t.ok(oldest.ok && oldest.value.shape === "legacy" && oldest.value.nodeEligible === null);
});

t.test("JSON without the known fields is an unknown shape, not an error", async (t) => {
  const r = parseKubeProxyHealth(200, '{"status":"ok"}');
  t.same(r, {
    ok: true,
    value: {
      status: 200,
      shape: "unknown",
      healthy: null,
      lastUpdated: null,
      currentTime: null,
      nodeEligible: null,
    },
  });
});

t.test("not JSON, or not an object, is garbage", async (t) => {
  for (const bad of ["ok", "<html></html>", "", "[1,2]", "null", '{"healthy": tru'])
    t.equal(parseKubeProxyHealth(200, bad).ok, false, JSON.stringify(bad));
});
