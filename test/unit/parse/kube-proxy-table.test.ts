import t from "tap";
import {
  deleteKubeProxyTablesCommand,
  isKubeProxyTable,
  kubeProxyTableName,
} from "../../../agent/facts/kube-proxy-table.js";
import type { ConfigzFacts } from "../../../agent/facts/kube-proxy.js";

// kube-proxy's nftables table names, from the one helper every reader uses.
t.test("the name: /configz's when it gives one, else kube-proxy", async (t) => {
  const configz = (nftablesTableName: string | null) => ({ nftablesTableName }) as ConfigzFacts;
  t.equal(kubeProxyTableName(null), "kube-proxy");
  t.equal(kubeProxyTableName(configz(null)), "kube-proxy");
  t.equal(kubeProxyTableName(configz("")), "kube-proxy", "an empty name is no name");
  t.equal(kubeProxyTableName(configz("kp-test")), "kp-test");
});

t.test("its tables are the name in ip and ip6, never inet or another name", async (t) => {
  t.ok(isKubeProxyTable({ family: "ip", name: "kube-proxy" }, "kube-proxy"));
  t.ok(isKubeProxyTable({ family: "ip6", name: "kube-proxy" }, "kube-proxy"));
  t.notOk(isKubeProxyTable({ family: "inet", name: "kube-proxy" }, "kube-proxy"));
  t.notOk(isKubeProxyTable({ family: "ip", name: "kube-proxy" }, "kp-test"));
  t.notOk(isKubeProxyTable({ family: 4, name: "kube-proxy" }, "kube-proxy"), "a family that is no string");
  t.equal(deleteKubeProxyTablesCommand(), "nft delete table ip kube-proxy; nft delete table ip6 kube-proxy");
});
