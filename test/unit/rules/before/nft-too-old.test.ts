import t from "tap";
import { ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";

t.test("nft older than 1.0.1 blocks; 1.0.1 does not", async (t) => {
  const old = judge(ipvsNode({ nftVersion: { version: "0.9.3", source: "dpkg" } }), new Map(), NOW);
  t.ok(ids(old).includes("nft-too-old"));
  const ok = judge(ipvsNode({ nftVersion: { version: "1.0.1", source: "dpkg" } }), new Map(), NOW);
  t.notOk(ids(ok).includes("nft-too-old"));
});
