// The cluster's NodePorts and whether kube-proxy restricts where they answer (nodePortAddresses). A
// config that was not read, or that lives where the API cannot show it, says nothing about
// nodePortAddresses: the finding must not claim they answer on every node address.
import t from "tap";
import { clusterChecks } from "../../../../collector/rules/index.js";
import type { ClusterFacts } from "../../../../collector/report/cluster-facts.js";
import { apiService, cfg, facts, hostFileFacts } from "../../../helpers/fleet.js";

const web = apiService("web", {
  type: "NodePort",
  ports: [{ name: null, protocol: "TCP", port: 80, nodePort: 30080 }],
});
const inventory = (f: ClusterFacts) =>
  clusterChecks({ ...f, services: [web] }, []).find((x) => x.id === "cluster-nodeport-inventory");

t.test("read and unset: answers on every address today", async (t) => {
  const f = inventory(facts({}, cfg({ mode: "ipvs" })));
  t.equal(f?.severity, "warning");
  t.match(f?.title, /answer on every node address today/);
  t.same(f?.evidence.nodePortAddresses, []);
});

t.test("read and set: info, with the value", async (t) => {
  const f = inventory(facts({}, cfg({ mode: "ipvs", nodePortAddresses: ["10.0.0.0/8"] })));
  t.equal(f?.severity, "info");
  t.same(f?.evidence.nodePortAddresses, ["10.0.0.0/8"]);
});

t.test("kube-proxy on flags alone, without --nodeport-addresses: its default, unset", async (t) => {
  const base = facts({}, cfg({ mode: "ipvs", nodePortAddresses: ["10.0.0.0/8"] }));
  const f = inventory({
    ...base,
    kubeProxyDaemonSet: {
      ...base.kubeProxyDaemonSet!,
      argv: ["/usr/local/bin/kube-proxy", "--proxy-mode=ipvs"],
      configFlag: null,
      configMount: null,
    },
  });
  t.match(f?.title, /answer on every node address today/, "a leftover ConfigMap's value is not used");
});

t.test("not read: the count, and nodePortAddresses said as not known", async (t) => {
  const unread = facts(
    { gaps: [{ what: "configmap kube-system/kube-proxy", reason: "HTTP 403 Forbidden" }] },
    null,
  );
  for (const [name, f] of [
    ["ConfigMap unreadable", unread],
    ["--config from a host file", hostFileFacts()],
  ] as const) {
    const got = inventory(f);
    t.ok(got, `${name}: the NodePorts are still listed`);
    t.notMatch(got?.title, /answer on every node address today/, `${name}: no claim about today`);
    t.match(got?.title, /nodePortAddresses.*not read/, `${name}: said as not read`);
    t.equal(got?.evidence.nodePortAddresses, null, `${name}: not an empty list`);
  }
});
