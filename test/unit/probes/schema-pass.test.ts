import t from "tap";
import { readFileSync } from "node:fs";
import { PROBES } from "../../../agent/probes/registry.js";
import { defineProbe, type Probe } from "../../../agent/probes/types.js";
import { runProbes } from "../../../agent/scan.js";
import { probeContext, probeSettings } from "../../helpers/probe-context.js";

// The scan checks a probe's facts against its schema, except for the probes whose facts come only from
// typed parsers (the 10,000-entry lists): those are held to their schema by their own tests, here named.

const input = () => ({ ...probeContext(), ...probeSettings({}), probeTimeoutMs: 30_000 });
// Facts outside KernelFacts' schema (its release is a string).
const outside = { release: 42 } as unknown;

t.test("facts outside an untyped probe's schema are a named failure, not served", async (t) => {
  const probe = defineProbe("kernel", {
    run: async () => ({ ok: true, facts: outside as never }),
  }) as Probe<unknown>;
  const [r] = await runProbes(input(), [probe]);
  t.match(r?.outcome, { ok: false, error: { kind: "garbage", message: /kernel produced facts outside/ } });
});

t.test("a probe typed by its parsers is not checked again by the scan", async (t) => {
  const probe = defineProbe("kernel", {
    typedByParser: true,
    run: async () => ({ ok: true, facts: outside as never }),
  }) as Probe<unknown>;
  const [r] = await runProbes(input(), [probe]);
  t.same(r?.outcome, { ok: true, facts: outside });
});

t.test(
  "exactly the list probes skip the scan's pass, and each one's test parses its facts with zod",
  async (t) => {
    const typed = PROBES.filter((p) => p.typedByParser === true).map((p) => p.name);
    t.same(typed.sort(), ["addresses", "ipsets", "ipvs", "kube-ipvs0"]);
    const schemaOf: Record<string, string> = {
      addresses: "AddressesFacts",
      ipsets: "IpsetFacts",
      ipvs: "IpvsFacts",
      "kube-ipvs0": "KubeIpvs0Facts",
    };
    for (const name of typed) {
      const test = readFileSync(new URL(`./${name}.test.ts`, import.meta.url), "utf8");
      t.match(test, new RegExp(`${schemaOf[name]}\\.parse\\(`), `${name}.test.ts checks its facts with zod`);
    }
  },
);
