import t from "tap";
import { kernelModulesProbe } from "../../../agent/probes/kernel-modules.js";
import { fixture, probeContext, tree } from "../../helpers/probe-context.js";

// nf_tables and the nft_* modules nftables mode needs: loaded, built in, available or absent.

t.test("kernel-modules: UML 6.1 tree with modules loaded", async (t) => {
  const kernel = { ok: true as const, facts: { release: "6.1.176", major: 6, minor: 1, patch: 176 } };
  const r = await kernelModulesProbe.run(
    probeContext({ hostRoot: fixture("uml-6.1"), procRoot: fixture("uml-6.1/proc"), prior: { kernel } }),
  );
  t.same(r, {
    ok: true,
    facts: {
      moduleTreeReadable: true,
      modules: [
        { name: "nf_tables", state: "loaded" },
        { name: "nf_nat", state: "loaded" },
        { name: "nft_chain_nat", state: "absent" },
        { name: "nft_ct", state: "loaded" },
        { name: "nft_nat", state: "absent" },
        { name: "nft_masq", state: "loaded" },
        { name: "nft_numgen", state: "loaded" },
        { name: "nft_fib", state: "absent" },
        { name: "nft_fib_ipv4", state: "absent" },
        { name: "nft_fib_ipv6", state: "absent" },
        { name: "nft_reject", state: "loaded" },
        { name: "nft_reject_ipv4", state: "absent" },
        { name: "nft_reject_ipv6", state: "absent" },
      ],
    },
  });

  // Nothing loaded (this machine has no /proc/modules): what the tree offers is "available".
  const idle = await kernelModulesProbe.run(
    probeContext({ hostRoot: fixture("uml-6.1"), procRoot: fixture("host/proc"), prior: { kernel } }),
  );
  t.same(idle.ok && idle.facts.modules.filter((m) => m.state === "available").map((m) => m.name), [
    "nf_tables",
    "nf_nat",
    "nft_ct",
    "nft_masq",
    "nft_numgen",
    "nft_reject",
  ]);

  const builtinRoot = tree(t, {
    lib: {
      modules: { "6.1.176": { "modules.builtin": "kernel/net/netfilter/nf_tables.ko\n", "modules.dep": "" } },
    },
  });
  const b = await kernelModulesProbe.run(
    probeContext({ hostRoot: builtinRoot, procRoot: fixture("host/proc"), prior: { kernel } }),
  );
  t.equal(b.ok && b.facts.modules[0]?.state, "builtin");
});

t.test("kernel-modules: no module tree, or no kernel release, means moduleTreeReadable false", async (t) => {
  const kernel = { ok: true as const, facts: { release: "6.18.44-fc-v595", major: 6, minor: 18, patch: 44 } };
  const r = await kernelModulesProbe.run(probeContext({ prior: { kernel } }));
  t.same(r.ok && [r.facts.moduleTreeReadable, [...new Set(r.facts.modules.map((m) => m.state))]], [
    false,
    ["absent"],
  ]);
  const failed = { ok: false as const, error: { kind: "io" as const, message: "x" } };
  const noRelease = await kernelModulesProbe.run(
    probeContext({
      hostRoot: fixture("uml-6.1"),
      procRoot: fixture("uml-6.1/proc"),
      prior: { kernel: failed },
    }),
  );
  t.same(noRelease.ok && [noRelease.facts.moduleTreeReadable, noRelease.facts.modules[0]?.state], [
    false,
    "loaded",
  ]);
  const garbage = tree(t, { modules: "<html>\n" });
  const g = await kernelModulesProbe.run(probeContext({ procRoot: garbage, prior: { kernel } }));
  t.same(!g.ok && [g.error.kind, g.error.command], ["garbage", `${garbage}/modules`]);
});
