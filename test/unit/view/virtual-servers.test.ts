// The NodePort ipsets whose membership decides which IPVS virtual servers are kube-proxy's NodePorts: ipvs
// mode's KUBE-NODE-PORT-* (kubernetes/kubernetes pkg/proxy/ipvs/ipset.go), the older bitmap SCTP set
// included, with the IPv6 proxier's KUBE-6- twins.
import t from "tap";
import { nodePortSetNames } from "../../../agent/view/virtual-servers.js";

t.test("each family and protocol's NodePort sets, by name", async (t) => {
  t.same(nodePortSetNames("inet", "TCP"), ["KUBE-NODE-PORT-TCP"]);
  t.same(nodePortSetNames("inet", "UDP"), ["KUBE-NODE-PORT-UDP"]);
  t.same(nodePortSetNames("inet", "SCTP"), ["KUBE-NODE-PORT-SCTP-HASH", "KUBE-NODE-PORT-SCTP"]);
  t.same(nodePortSetNames("inet6", "TCP"), ["KUBE-6-NODE-PORT-TCP"]);
  t.same(nodePortSetNames("inet6", "UDP"), ["KUBE-6-NODE-PORT-UDP"]);
  t.same(nodePortSetNames("inet6", "SCTP"), ["KUBE-6-NODE-PORT-SCTP-HASH", "KUBE-6-NODE-PORT-SCTP"]);
  t.same(nodePortSetNames("inet", "ICMP"), [], "no NodePort set for another protocol");
});
