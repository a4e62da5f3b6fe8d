import t from "tap";
import { renderText } from "../../../agent/render/text.js";
import { recordedConnNode } from "../../helpers/recorded-conn-node.js";
import { reportOf } from "../../helpers/reports.js";

// The text report says how many connections through kube-proxy's IPVS the switch would cut, and says
// "not read" rather than nothing when the connection table was not read.
t.test("ipvs mode: the live connections through kube-proxy's virtual servers, counted", async (t) => {
  const text = renderText(reportOf(recordedConnNode()), false);
  t.match(
    text,
    /IPVS connections through kube-proxy: 7 established \(3 other\), the busiest TCP 10\.96\.143\.30:80 \(3\)/,
  );
  const unread = renderText(
    reportOf(recordedConnNode({ ipvsConnections: null }), {
      "ipvs-connections": { kind: "io", message: "/proc/net/ip_vs_conn: EIO" },
    }),
    false,
  );
  t.match(unread, /IPVS connections through kube-proxy: not read/);
});
