import t from "tap";
import { fileURLToPath } from "node:url";
import { netnsAvailable, withNetns } from "../helpers/netns.js";
import { finding, findingIds } from "../helpers/scan-report.js";
import { scanInNetns } from "../helpers/standin.js";

// ip-forward-not-persistent on the host kernel: IPv4 forwarding turned on in a network namespace (as
// kube-proxy's ipvs mode turns it on), kube-proxy's endpoints answered by the stand-in as ipvs mode,
// and the built agent scanning from inside the namespace, reading the persistent configuration of the
// host trees in test/fixtures/sysctl through --host-root.
const hostRoot = (scenario: string) =>
  fileURLToPath(new URL(`../fixtures/sysctl/${scenario}`, import.meta.url));
const IPVS = { mode: "ipvs", version: "v1.33.1", lastSync: { agoSeconds: 3 }, healthy: true };
const ID = "ip-forward-not-persistent";

if (!netnsAvailable()) {
  t.fail("network namespaces are not available: this test needs root (CI runs as root)");
} else {
  t.test("forwarding on in the namespace, nothing persistent sets it: the finding, with its file", (t) =>
    withNetns(async (ns) => {
      ns.must(["ip", "link", "set", "lo", "up"]);
      ns.must(["sysctl", "-qw", "net.ipv4.ip_forward=1"]);
      const r = await scanInNetns(ns, IPVS, ["--host-root", hostRoot("debian-12")]);
      t.equal(r.phase, "ipvs");
      t.equal(r.probes.find((p) => p.name === "sysctl-config")?.ok, true);
      const f = finding(r, ID);
      t.same(f?.evidence, { running: "1", persistent: null, setBy: null, filesRead: 4, setAtStartBy: [] });
      t.match(f?.remedy, /\/etc\/sysctl\.d\/99-kubernetes-ip-forward\.conf/);
      t.not(r.verdict, "ready");
    }),
  );
  t.test("set persistently (kubeadm's k8s.conf): no finding", (t) =>
    withNetns(async (ns) => {
      ns.must(["ip", "link", "set", "lo", "up"]);
      ns.must(["sysctl", "-qw", "net.ipv4.ip_forward=1"]);
      const r = await scanInNetns(ns, IPVS, ["--host-root", hostRoot("kubeadm")]);
      t.notOk(findingIds(r).includes(ID));
    }),
  );
  t.test("forwarding off in the namespace (the kernel's default): nothing depends on kube-proxy", (t) =>
    withNetns(async (ns) => {
      ns.must(["ip", "link", "set", "lo", "up"]);
      const r = await scanInNetns(ns, IPVS, ["--host-root", hostRoot("debian-12")]);
      t.equal(r.facts.sysctls?.values.find((v) => v.name === "net.ipv4.ip_forward")?.value, "0");
      t.notOk(findingIds(r).includes(ID));
    }),
  );
}
