import { readFileSync } from "node:fs";
import t from "tap";
import { ApiNode } from "../../../../collector/report/cluster-facts.js";
import { describe, ReadFailed } from "../../../../collector/sources/kubernetes/errors.js";
import { nodePage, toApiNode } from "../../../../collector/sources/kubernetes/nodes.js";

// The node list is read as JSON, not through the client's generated deserializer: what a page of the
// API server's NodeList gives, and how a page that is not one is refused.
const template = JSON.parse(
  readFileSync(new URL("../../../fixtures/kubernetes/node.template.json", import.meta.url), "utf8"),
) as Record<string, unknown>;

t.test("a NodeList page: its items as the report holds them, and the continue token", async (t) => {
  const page = nodePage(
    JSON.stringify({ kind: "NodeList", metadata: { continue: "500" }, items: [template, template] }),
  );
  t.equal(page.items.length, 2);
  t.equal(page.metadata._continue, "500");
  const n = page.items[0]!;
  t.ok(ApiNode.safeParse(n).success);
  t.match(n, {
    name: String((template.metadata as { name: string }).name),
    kubeletVersion: /^v1\./,
    kernelVersion: /\S/,
    ready: true,
    unschedulable: false,
  });
  t.ok(n.addresses.length > 0 && n.addresses.every((a) => typeof a.address === "string"));
  t.same(nodePage('{"items":[],"metadata":{"continue":""}}'), { items: [], metadata: {} }, "last page");
});

t.test("a field of the wrong type reads as absent, never outside the schema", async (t) => {
  const odd = toApiNode({
    metadata: { name: 7, labels: { a: "x", b: 1, c: null } },
    status: {
      nodeInfo: { kubeletVersion: ["v1.33"], kernelVersion: "6.8.0" },
      addresses: [null, { type: "InternalIP" }, { type: "InternalIP", address: "10.0.0.1" }, "x"],
      conditions: "Ready",
    },
    spec: { unschedulable: "true", providerID: 5 },
  });
  t.same(odd, {
    name: "",
    kubeletVersion: null,
    kernelVersion: "6.8.0",
    osImage: null,
    addresses: [{ type: "InternalIP", address: "10.0.0.1" }],
    labels: { a: "x" },
    ready: null,
    unschedulable: false,
    providerID: null,
  });
  t.ok(ApiNode.safeParse(odd).success);
  t.same(toApiNode(null), toApiNode({}));
});

t.test("a page that is not a NodeList is a named failure, as describe() says it", async (t) => {
  for (const [body, msg] of [
    ["<html>", /not JSON/],
    ['{"kind":"Status"}', /no items array/],
    ["null", /no items array/],
    ['{"items":[{}, null]}', /item 1 is not an object/],
  ] as const) {
    const e = (() => {
      try {
        nodePage(body);
        return null;
      } catch (x) {
        return x;
      }
    })();
    t.ok(e instanceof ReadFailed, body);
    t.match(describe(e), msg);
  }
});
