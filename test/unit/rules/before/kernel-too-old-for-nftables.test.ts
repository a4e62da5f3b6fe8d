import t from "tap";
import { ipvsNode, judge, kernel, NOW } from "../../../helpers/rules.js";

t.test("kernel older than 5.13 blocks, with distro-aware advice", async (t) => {
  const j = judge(
    ipvsNode({
      kernel: kernel("5.4.0-216-generic"),
      osRelease: {
        source: "/etc/os-release",
        id: "ubuntu",
        idLike: ["debian"],
        versionId: "20.04",
        versionCodename: "focal",
        prettyName: "Ubuntu 20.04.6 LTS",
      },
    }),
    new Map(),
    NOW,
  );
  t.equal(j.verdict, "blocked");
  const f = j.findings.find((x) => x.id === "kernel-too-old-for-nftables");
  t.ok(f?.blocksMigration);
  t.match(f?.remedy, /linux-generic-hwe-20\.04/);
  t.equal(f?.evidence.kernel, "5.4.0-216-generic");
});
