import t from "tap";
import { ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";
import { iptablesBackend } from "../../../helpers/facts.js";

t.test("an INPUT policy DROP before the switch is told; ACCEPT is not", async (t) => {
  const drop = judge(
    ipvsNode({ iptables: { backends: [iptablesBackend({ policies: { "filter/INPUT": "DROP" } })] } }),
    new Map(),
    NOW,
  );
  t.ok(ids(drop).includes("host-firewall-needs-nodeport-range"));
  const accept = judge(
    ipvsNode({ iptables: { backends: [iptablesBackend({ policies: { "filter/INPUT": "ACCEPT" } })] } }),
    new Map(),
    NOW,
  );
  t.notOk(ids(accept).includes("host-firewall-needs-nodeport-range"));
});

// dockerd sets FORWARD to DROP when it enables ip_forward (moby setupIPForwarding); that alone
// is no host firewall that NodePorts must be opened in. Said as not counted, with why.
t.test("Docker's own FORWARD DROP is seen, not counted; anything else still is", async (t) => {
  const docker = ["DOCKER", "DOCKER-FORWARD", "DOCKER-USER"];
  const dockerOnly = judge(
    ipvsNode({
      iptables: {
        backends: [iptablesBackend({ policies: { "filter/FORWARD": "DROP" }, dockerChains: docker })],
      },
    }),
    new Map(),
    NOW,
  );
  t.notOk(ids(dockerOnly).includes("host-firewall-needs-nodeport-range"));
  t.match(dockerOnly.view.notCounted, [
    {
      check: "host-firewall-needs-nodeport-range",
      seen: "ipv4 nft filter/FORWARD policy DROP",
      why: /Docker/,
    },
  ]);
  const noDocker = judge(
    ipvsNode({ iptables: { backends: [iptablesBackend({ policies: { "filter/FORWARD": "DROP" } })] } }),
    new Map(),
    NOW,
  );
  t.ok(ids(noDocker).includes("host-firewall-needs-nodeport-range"), "a FORWARD DROP nobody explains counts");
  const inputToo = judge(
    ipvsNode({
      iptables: {
        backends: [
          iptablesBackend({
            policies: { "filter/FORWARD": "DROP", "filter/INPUT": "DROP" },
            dockerChains: docker,
          }),
        ],
      },
    }),
    new Map(),
    NOW,
  );
  const x = inputToo.findings.find((f) => f.id === "host-firewall-needs-nodeport-range");
  t.same(x?.evidence.firewall, ["ipv4 nft filter/INPUT policy DROP"], "Docker never drops INPUT");
  t.match(x?.evidence.notCounted, [/^ipv4 nft filter\/FORWARD policy DROP: Docker's own policy/]);
});
