import t from "tap";
import { csvCell, renderCsv, CSV_COLUMNS } from "../../../collector/render/csv.js";
import { renderHtml } from "../../../collector/render/html.js";
import { burnDownFromMatrix } from "../../../collector/sources/prometheus.js";
import { reviewFleet } from "../../helpers/review-fleet.js";

t.test("a cell: RFC 4180 quoting, and nothing a node supplies starts a formula", async (t) => {
  t.equal(csvCell("plain"), "plain");
  t.equal(csvCell('a "quoted", name'), '"a ""quoted"", name"');
  t.equal(csvCell("two\nlines"), '"two\nlines"');
  for (const f of ['=HYPERLINK("http://x")', "+1", "-1+2", "@SUM(A1)", "\tx"])
    t.equal(csvCell(f).replace(/^"/, "")[0], "'", `${JSON.stringify(f)} is text, not a formula`);
  t.equal(csvCell(null), "");
  // -o csv on a terminal: a node's ESC or CSI is shown, not obeyed; line breaks and tabs are kept.
  t.equal(csvCell("a\u001b[2Jb\u009bc"), "a\\u001b[2Jb\\u009bc");
  t.equal(csvCell("x\ty\r\nz"), '"x\ty\r\nz"');
});

t.test("one row per node, the page's download is the same text", async (t) => {
  const r = reviewFleet();
  const csv = renderCsv(r);
  const lines = csv.split("\r\n");
  t.equal(lines[0], CSV_COLUMNS.join(","));
  t.equal(lines.length - 2, r.nodes.length, "a row per node, CRLF-terminated");
  t.match(csv, /ip-10-20-12-8\.eu-west-1\.compute\.internal,ipvs,blocked,ok,/);
  const data = /<script type="application\/json" id="fleet-data">([^]*?)<\/script>/.exec(renderHtml(r))?.[1];
  t.equal(JSON.parse(data!).csv, csv, "embedded in the page verbatim");
});

t.test("the burn-down from a range query's matrix", async (t) => {
  const body = JSON.stringify({
    status: "success",
    data: {
      resultType: "matrix",
      result: [
        {
          metric: { phase: "ipvs" },
          values: [
            [1800000000, "5"],
            [1800003600, "3"],
          ],
        },
        { metric: { phase: "nftables" }, values: [[1800003600, "2"]] },
        { metric: { phase: "bogus" }, values: [[1800003600, "9"]] },
        { metric: { phase: "iptables" }, values: [[1800000000, "NaN"]] },
      ],
    },
  });
  const r = burnDownFromMatrix(body, "q");
  t.same(r, {
    ok: true,
    value: [
      { at: "2027-01-15T08:00:00.000Z", byPhase: { ipvs: 5 } },
      { at: "2027-01-15T09:00:00.000Z", byPhase: { ipvs: 3, nftables: 2 } },
    ],
  });
  t.match(burnDownFromMatrix('{"status":"error","errorType":"bad_data","error":"parse error"}', "q"), {
    ok: false,
    error: /parse error/,
  });
  t.match(burnDownFromMatrix("<html>", "q"), { ok: false });
  const vector = JSON.stringify({ status: "success", data: { resultType: "vector", result: [] } });
  t.match(burnDownFromMatrix(vector, "q"), { ok: false, error: /unexpected answer/ });
});

t.test("the pool a node belongs to, from the well-known node labels", async (t) => {
  const { poolOf } = await import("../../../collector/plan/node-pool.js");
  const pool = (labels: Record<string, string>) =>
    poolOf(labels, "Ubuntu 24.04.1 LTS", "6.8.0-1015-aws").split(" · ")[0];
  t.equal(pool({ "eks.amazonaws.com/nodegroup": "web" }), "web", "EKS managed node group");
  t.equal(pool({ "cloud.google.com/gke-nodepool": "default-pool" }), "default-pool", "GKE node pool");
  t.equal(pool({ "kubernetes.azure.com/agentpool": "nodepool1" }), "nodepool1", "AKS agent pool");
  t.equal(
    pool({ "kops.k8s.io/instancegroup": "nodes-eu-west-1a" }),
    "nodes-eu-west-1a",
    "kOps instance group",
  );
  t.equal(
    pool({ "node.kubernetes.io/instance-type": "m6i.xlarge" }),
    "m6i.xlarge",
    "the instance type as a fallback",
  );
  t.equal(
    pool({ "kops.k8s.io/instancegroup": "nodes", "node.kubernetes.io/instance-type": "m6i.xlarge" }),
    "nodes",
    "a named pool over the instance type",
  );
});
