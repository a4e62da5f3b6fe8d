import t, { type Test } from "tap";
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { GateKey } from "../../../agent/parse/ipvs-gate.js";
import { ipvsConnectionsProbe } from "../../../agent/probes/ipvs-connections.js";
import { ipvsProbe } from "../../../agent/probes/ipvs.js";
import { newScanShared, ScanCache } from "../../../agent/probes/scan-cache.js";
import { isolatedContext, optionsOf, stubTools, tree } from "../../helpers/probe-context.js";
import { recorded } from "../../helpers/tool-scripts.js";

// The ipvs-mode deep reads in serve: the real probes over a /proc tree the test changes between
// scans, a cache on a clock the test moves, and the gate's key as the scan would have read it.

const fx = (path: string) => fileURLToPath(new URL(`../../fixtures/ipvs/${path}`, import.meta.url));
const MINUTE = 60_000;

function node(t: Test) {
  const proc = tree(t, { net: {} });
  const table = readFileSync(fx("kube-small/proc/net/ip_vs"), "utf8");
  const setTable = (text: string) => writeFileSync(join(proc, "net/ip_vs"), text);
  setTable(table);
  const tools = stubTools(t, {
    ipvsadm: recorded(fx("kube-small/ipvsadm-L-timeout.txt"), "-L --timeout"),
  });
  // One virtual server fewer: the last one and its real servers.
  const smaller = table.slice(0, table.lastIndexOf("\nUDP ") + 1);
  return { proc, tools, table, smaller, setTable };
}

t.test("the IPVS table is reused while the gate's key stands still, read again when it moves", async (t) => {
  const n = node(t);
  let now = 10_000_000;
  const cache = new ScanCache(60 * MINUTE, () => now);
  const scan = async (key: GateKey, parity = false) => {
    const shared = newScanShared(undefined, async () => key);
    const ctx = isolatedContext({ procRoot: n.proc, tools: n.tools });
    const r = await ipvsProbe.run({ ...ctx, cache, shared }, { forParity: parity });
    if (!r.ok) throw new Error(JSON.stringify(r.error));
    return { facts: r.facts, fresh: shared.freshness.find((f) => f.source === "ipvs") };
  };
  const k1: GateKey = { known: true, key: "svc 21 ep 57 queued 1; ipsets a; links b" };
  const first = await scan(k1);
  t.equal(first.facts.virtualServerCount, 8);
  t.match(first.fresh, { reused: false, why: /first read/ });

  n.setTable(n.smaller); // changed on the node; the key says kube-proxy saw nothing
  now += MINUTE;
  const second = await scan(k1);
  t.equal(second.facts.virtualServerCount, 8, "reused: the read of the first scan");
  t.match(second.fresh, { reused: true, readAt: new Date(10_000_000).toISOString(), why: /synced every/ });
  t.ok(second.facts.timeouts, "the timeouts are kept with the table");

  const moved = await scan({ known: true, key: "svc 21 ep 58 queued 1; ipsets a; links b" });
  t.equal(moved.facts.virtualServerCount, 7, "an endpoint change: read again");
  t.match(moved.fresh, { reused: false, why: /ipvs-mode state changed since the last read \(svc 21 ep 57/ });

  n.setTable(n.table);
  const doubt = await scan({ known: false, why: "kube-proxy has 2 Service changes pending" });
  t.equal(doubt.facts.virtualServerCount, 8, "doubt: read");
  t.match(doubt.fresh, { reused: false, why: /in doubt: kube-proxy has 2 Service changes pending/ });

  const k2: GateKey = { known: true, key: "k2" };
  await scan(k2);
  n.setTable(n.smaller);
  t.equal((await scan(k2, true)).facts.virtualServerCount, 7, "parity on: always a fresh table");
  t.equal((await scan(k2)).facts.virtualServerCount, 8, "and the cache kept the read before parity");
  now += 60 * MINUTE;
  const full = await scan(k2);
  t.equal(full.facts.virtualServerCount, 7, "the full-read interval passed: read");
  t.match(full.fresh, { reused: false, why: /full-read interval/ });
});

t.test("an unread IPVS table is never served from the cache as absent", async (t) => {
  const n = node(t);
  const cache = new ScanCache(60 * MINUTE, () => 1);
  const key: GateKey = { known: false, why: "kube-proxy's /metrics not read: timeout" };
  rmSync(join(n.proc, "net/ip_vs"));
  mkdirSync(join(n.proc, "net/ip_vs"));
  const r = await ipvsProbe.run(
    {
      ...isolatedContext({ procRoot: n.proc, tools: n.tools }),
      cache,
      shared: newScanShared(undefined, async () => key),
    },
    optionsOf("ipvs"),
  );
  t.match(r, { ok: false }, "a table that cannot be read fails the probe by name");
});

t.test(
  "/proc/net/ip_vs_conn: read at most every interval, its age reported, a failure never the old count",
  async (t) => {
    const proc = tree(t, { net: {} });
    const conn = join(proc, "net/ip_vs_conn");
    copyFileSync(fx("conn/live/proc/net/ip_vs_conn"), conn);
    let now = 5_000_000;
    const cache = new ScanCache(60 * MINUTE, () => now, 5 * MINUTE);
    const scan = async () => {
      const shared = newScanShared();
      const r = await ipvsConnectionsProbe.run({
        ...isolatedContext({ procRoot: proc, tools: stubTools(t, {}) }),
        cache,
        shared,
      });
      return { r, fresh: shared.freshness.find((f) => f.source === "ipvs-connections") };
    };
    const a = await scan();
    t.match(a.r, { ok: true, facts: { entries: 12 } });
    t.match(a.fresh, { reused: false });
    writeFileSync(conn, readFileSync(conn, "utf8").split("\n").slice(0, 2).join("\n") + "\n");
    now += 4 * MINUTE;
    const b = await scan();
    t.match(b.r, { ok: true, facts: { entries: 12 } }, "within the interval: the last read's count");
    t.match(b.fresh, { reused: true, readAt: new Date(5_000_000).toISOString(), why: /at most every 300 s/ });
    now += MINUTE;
    const c = await scan();
    t.match(c.r, { ok: true, facts: { entries: 1 } }, "the interval passed: read");
    writeFileSync(conn, "not the table\n");
    now += 5 * MINUTE;
    const d = await scan();
    t.match(d.r, { ok: false, error: { kind: "garbage" } }, "a failed read fails, never the older count");
    t.equal(d.fresh, undefined);
    const off = await ipvsConnectionsProbe.run({
      ...isolatedContext({ procRoot: proc, tools: stubTools(t, {}) }),
      cache: new ScanCache(60 * MINUTE, () => now, 0),
      shared: newScanShared(),
    });
    t.match(off, { ok: false }, "interval 0: every scan reads");
  },
);
