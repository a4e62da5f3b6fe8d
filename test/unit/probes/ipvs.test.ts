import t from "tap";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { IpvsFacts } from "../../../agent/facts/ipvs.js";
import { ipvsProbe } from "../../../agent/probes/ipvs.js";
import { readIpvsTable } from "../../../agent/io/ipvs-table.js";
import { isolatedContext, optionsOf, stubTools, tree } from "../../helpers/probe-context.js";
import { recorded } from "../../helpers/tool-scripts.js";

// The probes against recorded fixture trees (procRoot/sysRoot) and stand-in tools that print the
// recorded answers through the real ToolRunner.
const fx = (path: string) => fileURLToPath(new URL(`../../fixtures/ipvs/${path}`, import.meta.url));

const TIMEOUT_ARGS = "-L --timeout";

t.test("ipvs: kube-small table and its changed timeouts", async (t) => {
  const d = stubTools(t, { ipvsadm: recorded(fx("kube-small/ipvsadm-L-timeout.txt"), TIMEOUT_ARGS) });
  const r = await ipvsProbe.run(
    isolatedContext({ procRoot: fx("kube-small/proc"), tools: d }),
    optionsOf("ipvs"),
  );
  if (!r.ok) return t.fail(JSON.stringify(r.error));
  IpvsFacts.parse(r.facts);
  t.match(r.facts, {
    available: true,
    virtualServerCount: 8,
    realServerCount: 16,
    schedulers: { rr: 8 },
    timeouts: { tcp: 7200, tcpFin: 30, udp: 60 },
  });
  t.equal(r.facts.timeoutsError, undefined);
  t.same(d.calls(), ["ipvsadm -L --timeout"]);
});

t.test("ipvs: traffic totals from /proc/net/ip_vs_stats; without the file, the table still", async (t) => {
  const d = stubTools(t, { ipvsadm: recorded(fx("empty/ipvsadm-L-timeout.txt"), TIMEOUT_ARGS) });
  const r = await ipvsProbe.run(
    isolatedContext({ procRoot: fx("stats/traffic/proc"), tools: d }),
    optionsOf("ipvs"),
  );
  if (!r.ok) return t.fail(JSON.stringify(r.error));
  IpvsFacts.parse(r.facts);
  t.same(r.facts.stats, {
    connections: 10,
    incomingPackets: 52,
    outgoingPackets: 50,
    incomingBytes: 12784,
    outgoingBytes: 3680,
  });
  t.equal(r.facts.virtualServerCount, 1);
  t.equal(r.facts.statsError, undefined);

  // kube-small was recorded without ip_vs_stats beside it: no totals, and why, but the table is read.
  const noStats = await ipvsProbe.run(
    isolatedContext({ procRoot: fx("kube-small/proc"), tools: d }),
    optionsOf("ipvs"),
  );
  t.ok(noStats.ok && noStats.facts.stats === null && noStats.facts.virtualServerCount === 8);
  t.equal(noStats.ok && noStats.facts.statsError?.kind, "io");
});

t.test("ipvs: IPv6, SCTP, FWM and persistent tables", async (t) => {
  const d = stubTools(t, { ipvsadm: recorded(fx("empty/ipvsadm-L-timeout.txt"), TIMEOUT_ARGS) });
  const want: Record<string, [number, number]> = {
    empty: [0, 0],
    ipv6: [5, 6],
    sctp: [2, 3],
    fwm: [4, 3],
    persistent: [4, 5],
    schedulers: [8, 13],
  };
  for (const [scenario, [vs, rs]] of Object.entries(want)) {
    const r = await ipvsProbe.run(
      isolatedContext({ procRoot: fx(`${scenario}/proc`), tools: d }),
      optionsOf("ipvs"),
    );
    if (!r.ok) return t.fail(JSON.stringify(r.error));
    t.equal(r.facts.virtualServerCount, vs, `${scenario} virtual servers`);
    t.equal(r.facts.realServerCount, rs, `${scenario} real servers`);
    t.same(r.facts.timeouts, { tcp: 900, tcpFin: 120, udp: 300 });
    IpvsFacts.parse(r.facts);
  }
});

t.test("ipvs: the large table streams from disk", async (t) => {
  const root = tree(t);
  mkdirSync(join(root, "net"));
  writeFileSync(join(root, "net/ip_vs"), gunzipSync(readFileSync(fx("large/proc/net/ip_vs.gz"))));
  const d = stubTools(t, { ipvsadm: recorded(fx("large/ipvsadm-L-timeout.txt"), TIMEOUT_ARGS) });
  const r = await ipvsProbe.run(isolatedContext({ procRoot: root, tools: d }), optionsOf("ipvs"));
  if (!r.ok) return t.fail(JSON.stringify(r.error));
  t.equal(r.facts.virtualServerCount, 1000);
  t.equal(r.facts.realServerCount, 10000);
  t.equal(r.facts.virtualServers.length, 1000);
  const one = await readIpvsTable(root, {
    keepRealServersOf: { protocol: "TCP", address: "10.96.0.1", port: 80 },
  });
  t.equal(one.ok && one.available && one.table.keptRealServers?.length, 10, "one Service's endpoints");
});

t.test("ipvs: no /proc/net/ip_vs means IPVS is not loaded, and ipvsadm is not run", async (t) => {
  // ipvsadm on a kernel without IPVS runs modprobe ip_vs: the recorded answer shows it trying.
  const d = stubTools(t, { ipvsadm: recorded(fx("not-loaded/ipvsadm-L-timeout.txt")) });
  const r = await ipvsProbe.run(isolatedContext({ procRoot: tree(t), tools: d }), optionsOf("ipvs"));
  t.same(r, {
    ok: true,
    facts: {
      available: false,
      virtualServerCount: 0,
      realServerCount: 0,
      schedulers: {},
      virtualServers: [],
      timeouts: null,
    },
  });
  t.same(d.calls(), []);
});

t.test("ipvs: timeouts are null, with the reason, when ipvsadm cannot say", async (t) => {
  const procRoot = fx("kube-small/proc");
  const missing = await ipvsProbe.run(
    isolatedContext({ procRoot, tools: stubTools(t, {}) }),
    optionsOf("ipvs"),
  );
  t.match(missing, {
    ok: true,
    facts: {
      available: true,
      virtualServerCount: 8,
      timeouts: null,
      timeoutsError: { kind: "missing-tool" },
    },
  });
  const failing = await ipvsProbe.run(
    isolatedContext({
      procRoot,
      tools: stubTools(t, { ipvsadm: recorded(fx("not-loaded/ipvsadm-L-timeout.txt")) }),
    }),
    optionsOf("ipvs"),
  );
  t.match(failing, {
    ok: true,
    facts: {
      timeouts: null,
      timeoutsError: {
        kind: "exit-status",
        message:
          "ipvsadm exited 2: modprobe: FATAL: Module ip_vs not found in directory /lib/modules/6.1.176",
        command: "ipvsadm -L --timeout",
      },
    },
  });
  const garbage = await ipvsProbe.run(
    isolatedContext({ procRoot, tools: stubTools(t, { ipvsadm: { stdout: "Timeout: soon\n" } }) }),
    optionsOf("ipvs"),
  );
  t.match(garbage, { ok: true, facts: { timeouts: null, timeoutsError: { kind: "garbage" } } });
  if (garbage.ok) IpvsFacts.parse(garbage.facts);
});

t.test("ipvs: an unreadable or garbled table fails the probe with a named error", async (t) => {
  const d = stubTools(t, {});
  const garbled = tree(t);
  mkdirSync(join(garbled, "net"));
  writeFileSync(
    join(garbled, "net/ip_vs"),
    readFileSync(fx("kube-small/proc/net/ip_vs"), "utf8").replace(/ {2}-> AC120004:192B.*\n/, "  -> AC12\n"),
  );
  const g = await ipvsProbe.run(isolatedContext({ procRoot: garbled, tools: d }), optionsOf("ipvs"));
  t.match(g, { ok: false, error: { kind: "garbage", command: `${garbled}/net/ip_vs` } });
  if (!g.ok) t.match(g.error.message, /line \d+: not a real server line/);

  const dir = tree(t);
  mkdirSync(join(dir, "net/ip_vs"), { recursive: true }); // a directory: EISDIR
  t.match(await ipvsProbe.run(isolatedContext({ procRoot: dir, tools: d }), optionsOf("ipvs")), {
    ok: false,
    error: { kind: "io" },
  });

  const empty = tree(t);
  mkdirSync(join(empty, "net"));
  writeFileSync(join(empty, "net/ip_vs"), "");
  t.match(await ipvsProbe.run(isolatedContext({ procRoot: empty, tools: d }), optionsOf("ipvs")), {
    ok: false,
    error: { kind: "garbage", message: /empty/ },
  });
});
