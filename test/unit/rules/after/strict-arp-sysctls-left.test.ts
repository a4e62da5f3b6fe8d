import t from "tap";
import { ids, ipvsNode, judge, nftNode, NOW } from "../../../helpers/rules.js";

const arp = (ignore: string, announce: string) => ({
  values: [
    { name: "net.ipv4.conf.all.arp_ignore", value: ignore },
    { name: "net.ipv4.conf.all.arp_announce", value: announce },
  ],
});

t.test("strictARP sysctls left after the switch are info; cleared ones are nothing", async (t) => {
  const left = judge(nftNode({ sysctls: arp("1", "2") }), new Map(), NOW);
  t.ok(ids(left).includes("strict-arp-sysctls-left"));
  t.notOk(
    ids(judge(nftNode({ sysctls: arp("0", "0") }), new Map(), NOW)).includes("strict-arp-sysctls-left"),
  );
  t.notOk(
    ids(judge(ipvsNode({ sysctls: arp("1", "2") }), new Map(), NOW)).includes("strict-arp-sysctls-left"),
    "in ipvs mode they are needed",
  );
});
