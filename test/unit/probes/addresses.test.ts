import t from "tap";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { AddressesFacts } from "../../../agent/facts/host.js";
import { ToolRunner } from "../../../agent/io/run.js";
import { addressesProbe } from "../../../agent/probes/addresses.js";
import type { ProbeContext } from "../../../agent/probes/types.js";
import { optionsOf } from "../../helpers/probe-context.js";

type Tree = { [name: string]: string | Tree };
// Every tree this file makes lives here, removed when the file ends.
const scratch = mkdtempSync(join(tmpdir(), "proxyscope-addresses-"));
t.teardown(() => rmSync(scratch, { recursive: true, force: true }));
/** A fresh temp directory holding `spec` (tap's t.testdir() is one directory per test, reset on each call). */
function tree(spec: Tree = {}, dir = mkdtempSync(join(scratch, "tree-"))): string {
  for (const [name, v] of Object.entries(spec)) {
    if (typeof v === "string") writeFileSync(join(dir, name), v);
    else {
      mkdirSync(join(dir, name), { recursive: true });
      tree(v, join(dir, name));
    }
  }
  return dir;
}

const rec = (name: string) => fileURLToPath(new URL(`../../fixtures/tools/ip/${name}`, import.meta.url));

function ctx(tools: ToolRunner): ProbeContext {
  return {
    hostRoot: "/nonexistent",
    procRoot: "/nonexistent",
    sysRoot: "/nonexistent",
    tools,
    callTimeoutMs: 5000,
    prior: {},
  };
}

/** A stand-in `ip` that prints a recorded file per argv, and fails on any argv it was not given. */
function fakeIp(byArgs: Record<string, string>, extra = ""): ToolRunner {
  const dir = tree();
  const cases = Object.entries(byArgs)
    .map(([args, file]) => `  "${args}") exec /bin/cat ${file} ;;`)
    .join("\n");
  writeFileSync(
    `${dir}/ip`,
    `#!/bin/sh\n${extra}\ncase "$*" in\n${cases}\n  *) echo "unexpected: $*" >&2; exit 99 ;;\nesac\n`,
  );
  chmodSync(`${dir}/ip`, 0o755);
  return new ToolRunner([dir]);
}

const ADDR = "-j -d addr show";
const R4 = "-j route show default";
const R6 = "-j -6 route show default";

t.test("primary from the default routes", async (t) => {
  const tools = fakeIp({
    [ADDR]: rec("addr-show-two-veths.json"),
    [R4]: rec("route-default-v4.json"),
    [R6]: rec("route-default-v6.json"),
  });
  const r = await addressesProbe.run(ctx(tools), optionsOf("addresses"));
  t.ok(r.ok);
  if (!r.ok) return;
  // zod is the oracle here: the scan does not check this probe's facts again (typedByParser).
  AddressesFacts.parse(r.facts);
  t.same(r.facts.primary, { ipv4: "10.10.0.2", ipv6: "fd00:10::2", source: "default-route" });
  t.same(
    r.facts.interfaces.map((i) => [i.name, i.kind, i.addresses.length]),
    [
      ["lo", null, 2],
      ["veth-a", "veth", 4],
      ["veth-a2", "veth", 2],
    ],
  );
});

t.test("preferred source wins; downward API wins over routes", async (t) => {
  const tools = fakeIp({
    [ADDR]: rec("addr-show-two-veths.json"),
    [R4]: rec("route-default-v4-prefsrc.json"),
    [R6]: rec("route-default-v6-none.json"),
  });
  const r = await addressesProbe.run(ctx(tools), optionsOf("addresses"));
  t.same(r.ok && r.facts.primary, { ipv4: "10.10.0.3", ipv6: null, source: "default-route" });
  const c = await addressesProbe.run(
    ctx(tools),
    optionsOf("addresses", { nodeIPs: ["192.168.77.2", "fd00:10::2"] }),
  );
  t.same(c.ok && c.facts.primary, { ipv4: "192.168.77.2", ipv6: "fd00:10::2", source: "config" });
});

t.test("no default route: none", async (t) => {
  const tools = fakeIp({
    [ADDR]: rec("addr-show-lo-only.json"),
    [R4]: rec("route-default-none.json"),
    [R6]: rec("route-default-v6-none.json"),
  });
  const r = await addressesProbe.run(ctx(tools), optionsOf("addresses"));
  t.same(r.ok && r.facts.primary, { ipv4: null, ipv6: null, source: "none" });
});

t.test("failures are typed: missing tool, exit status, garbage", async (t) => {
  const missing = await addressesProbe.run(ctx(new ToolRunner([tree()])), optionsOf("addresses"));
  t.equal(!missing.ok && missing.error.kind, "missing-tool");

  const exit = await addressesProbe.run(ctx(fakeIp({})), optionsOf("addresses"));
  t.same(!exit.ok && [exit.error.kind, exit.error.command], ["exit-status", "ip -j -d addr show"]);

  const half = tree({ "half.json": '[{"ifindex":1,"ifname":"lo","addr_in' });
  const g = await addressesProbe.run(ctx(fakeIp({ [ADDR]: `${half}/half.json` })), optionsOf("addresses"));
  t.same(!g.ok && [g.error.kind, g.error.command], ["garbage", "ip -j -d addr show"]);

  const routeGarbage = tree({ "r.json": "Error: any valid prefix is expected\n" });
  const rg = await addressesProbe.run(
    ctx(fakeIp({ [ADDR]: rec("addr-show-lo-only.json"), [R4]: `${routeGarbage}/r.json` })),
    optionsOf("addresses"),
  );
  t.same(!rg.ok && [rg.error.kind, rg.error.command], ["garbage", "ip -j route show default"]);
});
