import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import t from "tap";
import { procIpvsLookup } from "../../../agent/server/ipvs-lookup.js";

// /proc/net/ip_vs as recorded in a User-Mode Linux guest (test/fixtures/ipvs/README.md).
const procOf = (scenario: string) =>
  fileURLToPath(new URL(`../../fixtures/ipvs/${scenario}/proc`, import.meta.url));

t.test("one virtual server's real servers, read from a recorded /proc/net/ip_vs", async (t) => {
  const lookup = procIpvsLookup(procOf("persistent"));
  const r = await lookup({ protocol: "TCP", address: "10.96.0.30", port: 80 });
  if (r.status !== "found") return t.fail(`status ${r.status}`);
  t.match(r.virtualServer, {
    protocol: "TCP",
    address: "10.96.0.30",
    port: 80,
    scheduler: "rr",
    realServers: 2,
  });
  t.same(
    r.realServers.map((x) => [x.address, x.port, x.forward, x.weight, x.activeConns, x.inactiveConns]).sort(),
    [
      ["10.244.0.9", 8080, "Masq", 1, 0, 0],
      ["10.244.1.9", 8080, "Masq", 1, 0, 0],
    ],
  );
  const v6 = await lookup({ protocol: "TCP", address: "fd00:10:96::30", port: 80 });
  t.equal(v6.status, "found");
  if (v6.status === "found")
    t.same(
      v6.realServers.map((x) => x.address),
      ["fd00:10:244::9"],
    );
  t.same(
    await lookup({ protocol: "UDP", address: "10.96.0.30", port: 80 }),
    { status: "not-found" },
    "protocol counts",
  );
  t.same(await lookup({ protocol: "TCP", address: "10.96.0.30", port: 81 }), { status: "not-found" });
});

t.test("no /proc/net/ip_vs: IPVS not loaded; an unreadable table: a named failure", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-ipvs-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  t.same(await procIpvsLookup(dir)({ protocol: "TCP", address: "10.96.0.10", port: 53 }), {
    status: "ipvs-absent",
  });
  mkdirSync(join(dir, "net"));
  writeFileSync(join(dir, "net", "ip_vs"), "<html>not the kernel</html>\n");
  const r = await procIpvsLookup(dir)({ protocol: "TCP", address: "10.96.0.10", port: 53 });
  t.match(r, { status: "failed", error: { kind: "garbage" } });
});
