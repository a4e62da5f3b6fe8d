import t from "tap";
import { ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";

const modules = (state: "loaded" | "absent") => ({
  moduleTreeReadable: true,
  modules: [
    { name: "nf_tables", state: "loaded" as const },
    { name: "nft_ct", state },
  ],
});

t.test(
  "an nftables module neither loaded, built in nor installed blocks; all present does not",
  async (t) => {
    const missing = judge(ipvsNode({ kernelModules: modules("absent") }), new Map(), NOW);
    t.ok(ids(missing).includes("nftables-modules-missing"));
    t.notOk(
      ids(judge(ipvsNode({ kernelModules: modules("loaded") }), new Map(), NOW)).includes(
        "nftables-modules-missing",
      ),
    );
  },
);
