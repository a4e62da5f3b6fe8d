import t from "tap";
import { ConfigError, loadConfig, ruleOptions } from "../../../agent/config.js";

// The API server's --service-node-port-range is not published by kube-proxy; a cluster
// with a custom one sets it here, so its NodePort virtual servers are never called foreign.
t.test("--node-port-range reaches the rules", async (t) => {
  const cfg = loadConfig(["--node-port-range", "40000-40100"], {});
  t.same(cfg.nodePortRange, [40000, 40100]);
  t.same(ruleOptions(cfg).nodePortRange, [40000, 40100]);
  t.same(loadConfig([], { PROXYSCOPE_NODE_PORT_RANGE: "20000-22767" }).nodePortRange, [20000, 22767]);
  t.same(loadConfig([], {}).nodePortRange, [30000, 32767], "the API server's default");
});

t.test("a bad range is a named error", async (t) => {
  for (const bad of ["32767-30000", "30000", "0-70000", "a-b", "30000-"]) {
    let thrown: unknown = null;
    try {
      loadConfig(["--node-port-range", bad], {});
    } catch (e) {
      thrown = e;
    }
    t.ok(thrown instanceof ConfigError, `${bad}: a ConfigError`);
    t.match((thrown as Error)?.message, /^invalid --node-port-range: /, bad);
  }
});
