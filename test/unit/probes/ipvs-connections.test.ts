import t from "tap";
import { IpvsConnectionsFacts } from "../../../agent/facts/ipvs-connections.js";
import { ipvsConnectionsProbe } from "../../../agent/probes/ipvs-connections.js";
import { fixture, probeContext, tree } from "../../helpers/probe-context.js";

// The probe over the recorded UML /proc trees (test/fixtures/ipvs/conn, see the README there).

t.test("ipvs-connections: the recorded live table, counted per virtual address", async (t) => {
  const r = await ipvsConnectionsProbe.run(probeContext({ procRoot: fixture("ipvs/conn/live/proc") }));
  if (!r.ok) return t.fail(JSON.stringify(r.error));
  IpvsConnectionsFacts.parse(r.facts);
  t.match(r.facts, { available: true, entries: 12, established: 8, templates: 1 });
  t.equal(r.facts.byVirtualAddress.length, 6);
});

t.test("ipvs-connections: IPVS not loaded (no file) is no connection, and says so", async (t) => {
  const r = await ipvsConnectionsProbe.run(probeContext({ procRoot: tree(t, { net: {} }) }));
  t.same(r, {
    ok: true,
    facts: {
      available: false,
      entries: 0,
      established: 0,
      templates: 0,
      states: {},
      byVirtualAddress: [],
      virtualAddressCount: 0,
    },
  });
});

t.test("ipvs-connections: an unreadable or garbled table fails by name, never reads as 0", async (t) => {
  const garbled = await ipvsConnectionsProbe.run(
    probeContext({ procRoot: tree(t, { net: { ip_vs_conn: "not the table\n" } }) }),
  );
  t.match(garbled, { ok: false, error: { kind: "garbage", message: /ip_vs_conn line 1/ } });
  const dir = await ipvsConnectionsProbe.run(
    probeContext({ procRoot: tree(t, { net: { ip_vs_conn: { "a-directory": "" } } }) }),
  );
  t.match(dir, { ok: false, error: { message: /ip_vs_conn/ } });
});
