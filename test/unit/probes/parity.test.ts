import t from "tap";
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  linkSync,
  symlinkSync,
  writeFileSync,
  truncateSync,
} from "node:fs";
import { join } from "node:path";
import { ToolRunner } from "../../../agent/io/run.js";
import { ipvsProbe } from "../../../agent/probes/ipvs.js";
import { parityProbe, type ParityOptions } from "../../../agent/probes/parity.js";
import { newScanShared } from "../../../agent/probes/scan-cache.js";
import type { ProbeContext } from "../../../agent/probes/types.js";
import { SNAPSHOT_FORMAT } from "../../../agent/facts/parity.js";
import { tree } from "../../helpers/probe-context.js";

// The parity probe against real files and a stand-in nft that prints what the real nft 1.0.6 printed for
// kube-proxy's 1.34 test ruleset (test/fixtures/netfilter/recorded/nftables-v1.34).
const rec = new URL("../../fixtures/netfilter/recorded/nftables-v1.34/", import.meta.url).pathname;
const NFT = (fail: boolean, noChains = false) => `#!/bin/sh
${fail ? 'echo "Error: cache initialization failed: Operation not permitted" >&2; exit 1' : ""}
${noChains ? 'case "$*" in "-j list chains"*) echo "chains asked again" >&2; exit 99 ;; esac' : ""}
case "$*" in
  "-j list map ip kube-proxy "*) /bin/cat '${rec}nft-list-maps-ip.json' ;;
  "-j list chains ip") /bin/cat '${rec}nft-list-chains.json' ;;
  "-j list chains ip6") echo '{"nftables": [{"metainfo": {"json_schema_version": 1}}]}' ;;
  *) echo "unexpected nft $*" >&2; exit 99 ;;
esac
`;

const IP_VS = `IP Virtual Server version 1.2.1 (size=4096)
Prot LocalAddress:Port Scheduler Flags
  -> RemoteAddress:Port Forward Weight ActiveConn InActConn
TCP  AC1E0029:0050 rr
  -> 0AB40001:0050      Masq    1      0          0
TCP  AC1E002A:0050 rr
  -> 0AB40002:0050      Masq    1      0          0
TCP  C0A80002:0BB9 rr
  -> 0AB40002:0050      Masq    1      0          0
`;

/** A probe context with the parity snapshot it is run with (--parity-snapshot; null: off). */
type ParityCtx = ProbeContext & { parity: ParityOptions | null };

const runParity = (c: ParityCtx) => parityProbe.run(c, { snapshot: c.parity });

function ctx(
  t: Parameters<typeof tree>[0],
  o: { mode: string; path: string; nftFails?: boolean; maxAgeS?: number; noChains?: boolean },
): ParityCtx {
  const dir = tree(t, { nft: NFT(o.nftFails ?? false, o.noChains), proc: { net: { ip_vs: IP_VS } } });
  chmodSync(join(dir, "nft"), 0o755);
  return {
    hostRoot: "/",
    procRoot: join(dir, "proc"),
    sysRoot: "/sys",
    tools: new ToolRunner([dir]),
    callTimeoutMs: 10_000,
    parity: { path: o.path, maxAgeS: o.maxAgeS ?? 86_400, node: "n1" },
    prior: {
      "kube-proxy-mode": { ok: true, facts: { mode: o.mode } },
      "kube-ipvs0": {
        ok: true,
        facts: {
          present: true,
          kind: "dummy",
          operState: "DOWN",
          flags: [],
          addresses: ["172.30.0.41", "172.30.0.42"].map((address) => ({
            family: "inet",
            address,
            prefixLen: 32,
          })),
        },
      },
      ipsets: { ok: true, facts: { available: true, sets: [], nodePorts: ["TCP:3001"] } },
    },
  };
}

t.test("ipvs mode: kube-proxy's virtual servers written whole, nothing else left beside", async (t) => {
  const state = tree(t);
  const path = join(state, "ipvs-snapshot.json");
  const r = await runParity(ctx(t, { mode: "ipvs", path }));
  if (!r.ok) return t.fail(JSON.stringify(r.error));
  t.equal(r.facts.state, "recorded");
  const snap = JSON.parse(readFileSync(path, "utf8"));
  t.equal(snap.format, SNAPSHOT_FORMAT);
  t.same(
    snap.virtualServers.map((v: { kind: string; address: string; port: number; reals: string[] }) => [
      v.kind,
      v.address,
      v.port,
      v.reals,
    ]),
    [
      ["service-ip", "172.30.0.41", 80, ["10.180.0.1:80"]],
      ["service-ip", "172.30.0.42", 80, ["10.180.0.2:80"]],
      ["nodeport", "192.168.0.2", 3001, ["10.180.0.2:80"]],
    ],
  );
  t.same(readdirSync(state), ["ipvs-snapshot.json"], "no temp file left");
});

const ETH0 = (addr: string) => ({
  ok: true as const,
  facts: {
    interfaces: [
      {
        name: "eth0",
        kind: null,
        operState: "UP",
        addresses: [{ family: "inet" as const, address: addr, prefixLen: 24, scope: "global" }],
      },
    ],
    primary: { ipv4: addr, ipv6: null, source: "default-route" as const },
  },
});
const ARP_IGNORE = (value: string) => ({
  ok: true as const,
  facts: { values: [{ name: "net.ipv4.conf.all.arp_ignore", value }] },
});

t.test(
  "ipvs mode: Service IPs in eth0's prefix with arp_ignore 0 are marked reached only by ARP",
  async (t) => {
    const path = join(tree(t), "s.json");
    const c = ctx(t, { mode: "ipvs", path });
    c.prior.addresses = ETH0("172.30.0.10");
    c.prior.sysctls = ARP_IGNORE("0");
    const r = await runParity(c);
    if (!r.ok) return t.fail(JSON.stringify(r.error));
    const snap = JSON.parse(readFileSync(path, "utf8"));
    t.same(
      snap.virtualServers.map((v: { address: string; arpOnly?: boolean }) => [v.address, v.arpOnly ?? false]),
      [
        ["172.30.0.41", true],
        ["172.30.0.42", true],
        ["192.168.0.2", false],
      ],
    );
    t.equal(snap.arpNotRead, undefined);

    // strictARP (arp_ignore 1): the node never answered for them; whatever reaches them is an announcer.
    c.prior.sysctls = ARP_IGNORE("1");
    await runParity(c);
    t.notOk(
      JSON.parse(readFileSync(path, "utf8")).virtualServers.some((v: { arpOnly?: boolean }) => v.arpOnly),
    );

    // Addresses unread: the snapshot says it could not tell, never "none ARP-only".
    c.prior.addresses = { ok: false, error: { kind: "exec-failed", message: "ip failed" } };
    await runParity(c);
    t.match(JSON.parse(readFileSync(path, "utf8")).arpNotRead, /addresses were not read/);
  },
);

t.test("after the switch: an address IPVS reached only by ARP is not called served", async (t) => {
  const path = join(tree(t), "s.json");
  writeFileSync(
    path,
    JSON.stringify({
      format: SNAPSHOT_FORMAT,
      node: "n1",
      takenAt: Math.floor(Date.now() / 1000) - 60,
      virtualServers: [
        { kind: "service-ip", protocol: "TCP", address: "172.30.0.41", port: 80, reals: ["10.180.0.1:80"] },
        {
          kind: "service-ip",
          protocol: "TCP",
          address: "172.30.0.42",
          port: 80,
          reals: ["10.180.0.2:80"],
          arpOnly: true,
        },
      ],
    }),
  );
  const r = await runParity(ctx(t, { mode: "nftables", path }));
  if (!r.ok || r.facts.state !== "compared") return t.fail(JSON.stringify(r));
  t.equal(r.facts.counts.arpOnly, 1);
  t.same(
    r.facts.services.filter((s) => s.status === "arp-only").map((s) => [s.service, s.addresses]),
    [["ns2/svc2:p80", ["172.30.0.42:80"]]],
  );
});

t.test("ipvs mode without kube-ipvs0 read: not recorded, and says why", async (t) => {
  const c = ctx(t, { mode: "ipvs", path: join(tree(t), "s.json") });
  c.prior["kube-ipvs0"] = { ok: false, error: { kind: "exec-failed", message: "ip failed" } };
  const r = await runParity(c);
  t.same(r.ok && r.facts, { state: "not-recorded", path: c.parity!.path, why: "kube-ipvs0 was not read" });
  t.notOk(existsSync(c.parity!.path));
});

t.test("after the switch: the 1.34 table serves svc1 and svc2, a third address lost", async (t) => {
  const state = tree(t);
  const path = join(state, "s.json");
  const now = Math.floor(Date.now() / 1000);
  writeFileSync(
    path,
    JSON.stringify({
      format: SNAPSHOT_FORMAT,
      node: "n1",
      takenAt: now - 300,
      virtualServers: [
        { kind: "service-ip", protocol: "TCP", address: "172.30.0.41", port: 80, reals: ["10.180.0.1:80"] },
        { kind: "service-ip", protocol: "TCP", address: "172.30.0.42", port: 80, reals: ["10.180.0.9:80"] },
        { kind: "service-ip", protocol: "TCP", address: "172.30.0.99", port: 80, reals: ["10.180.0.7:80"] },
      ],
    }),
  );
  const r = await runParity(ctx(t, { mode: "nftables", path }));
  if (!r.ok || r.facts.state !== "compared") return t.fail(JSON.stringify(r));
  t.same(r.facts.counts, { same: 1, missingAfter: 1, endpointsDiffer: 1, newAfter: 4, arpOnly: 0 });
  t.same(
    r.facts.services
      .filter((s) => s.status !== "new-after")
      .map((s) => [s.status, s.service ?? s.addresses[0]]),
    [
      ["missing-after", "172.30.0.99:80"],
      ["endpoints-differ", "ns2/svc2:p80"],
    ],
  );
  t.ok(r.facts.ageSeconds >= 300);
});

t.test(
  "after the switch, from the endpoints the nftables probe kept: the same comparison, no chain listing",
  async (t) => {
    const { parseNftChains } = await import("../../../agent/parse/nft-json.js");
    const { addChain, chainServed } = await import("../../../agent/parse/nft-services.js");
    const state = tree(t);
    const path = join(state, "s.json");
    writeFileSync(
      path,
      JSON.stringify({
        format: SNAPSHOT_FORMAT,
        node: "n1",
        takenAt: Math.floor(Date.now() / 1000) - 60,
        virtualServers: [
          { kind: "service-ip", protocol: "TCP", address: "172.30.0.41", port: 80, reals: ["10.180.0.1:80"] },
          { kind: "service-ip", protocol: "TCP", address: "172.30.0.42", port: 80, reals: ["10.180.0.9:80"] },
        ],
      }),
    );
    const alone = await runParity(ctx(t, { mode: "nftables", path }));
    const chains = parseNftChains(readFileSync(`${rec}nft-list-chains.json`, "utf8"));
    if (!chains.ok) return t.fail(chains.error);
    const shared = newScanShared();
    const kept = chainServed();
    for (const c of chains.value) addChain(kept, c, "kube-proxy");
    shared.nftChainServed = kept;
    const before = JSON.stringify([...kept.endpoints].map(([k, v]) => [k, [...v]]));
    const reused = await runParity({ ...ctx(t, { mode: "nftables", path, noChains: true }), shared });
    if (!alone.ok || !reused.ok) return t.fail(JSON.stringify({ alone, reused }));
    t.equal(reused.facts.state, "compared", "no chain listing asked for (the stand-in fails one)");
    const { ageSeconds: _a, ...a } = alone.facts as { ageSeconds: number };
    const { ageSeconds: _b, ...b } = reused.facts as { ageSeconds: number };
    t.same(b, a, "the same facts as the probe listing chains itself");
    t.equal(
      JSON.stringify([...kept.endpoints].map(([k, v]) => [k, [...v]])),
      before,
      "the kept endpoints unchanged",
    );
  },
);

t.test("the snapshot's named states: absent, corrupt, too big, stale", async (t) => {
  const state = tree(t);
  const path = join(state, "s.json");
  const run = async (maxAgeS?: number) => {
    const r = await runParity(ctx(t, { mode: "nftables", path, ...(maxAgeS ? { maxAgeS } : {}) }));
    return r.ok ? r.facts : null;
  };
  t.equal((await run())?.state, "no-snapshot");
  writeFileSync(path, '{"format": "proxyscope-ipvs-snapshot/1", "virtualSer');
  t.match(await run(), { state: "corrupt", why: /not JSON/ });
  writeFileSync(path, '{"format": "something-else"}');
  t.match(await run(), { state: "corrupt", why: /not a snapshot/ });
  writeFileSync(path, "");
  truncateSync(path, 65 * 1024 * 1024);
  t.match(await run(), { state: "corrupt", why: /larger than/ });
  writeFileSync(
    path,
    JSON.stringify({ format: SNAPSHOT_FORMAT, node: "n1", takenAt: 1000, virtualServers: [] }),
  );
  t.match(await run(3600), { state: "stale", maxAgeSeconds: 3600 });
});

t.test("nft fails: the probe fails (unread), never an empty table that loses every Service", async (t) => {
  const path = join(tree(t), "s.json");
  writeFileSync(
    path,
    JSON.stringify({ format: SNAPSHOT_FORMAT, node: "n1", takenAt: Date.now() / 1000, virtualServers: [] }),
  );
  const r = await runParity(ctx(t, { mode: "nftables", path, nftFails: true }));
  t.equal(r.ok, false);
});

t.test("a guessed or other mode neither records nor compares; off without a path", async (t) => {
  const c = ctx(t, { mode: "iptables", path: join(tree(t), "s.json") });
  t.same((await runParity(c)).ok && (await runParity(c)), {
    ok: true,
    facts: { state: "not-applicable", why: "kube-proxy answers iptables" },
  });
  t.notOk(existsSync(c.parity!.path));
  t.same(await runParity({ ...c, parity: null }), { ok: true, facts: { state: "off" } });
});

// One read of /proc/net/ip_vs per scan (at 10,000 Services ~13 s of CPU in UML): with a snapshot
// asked for, the ipvs probe keeps the real servers and parity records from that very read, so the
// snapshot is the table the findings were judged on even if IPVS changes in between.
t.test("ipvs mode: the snapshot is the ipvs probe's read of this scan, not a second one", async (t) => {
  const path = join(tree(t), "s.json");
  const c = { ...ctx(t, { mode: "ipvs", path }), shared: newScanShared() };
  const ipvs = await ipvsProbe.run({ ...c, prior: {} }, { forParity: true });
  t.ok(ipvs.ok && ipvs.facts.virtualServerCount === 3, "the ipvs probe read three virtual servers");
  writeFileSync(join(c.procRoot, "net", "ip_vs"), IP_VS.split("TCP  C0A80002")[0]!);
  const r = await runParity(c);
  t.match(r, { ok: true, facts: { state: "recorded", virtualServers: 3, realServers: 3 } });
  const snap = JSON.parse(readFileSync(path, "utf8"));
  t.same(
    snap.virtualServers.map((v: { address: string; port: number }) => `${v.address}:${v.port}`),
    ["172.30.0.41:80", "172.30.0.42:80", "192.168.0.2:3001"],
  );
});

t.test("ipvs mode: without the ipvs probe's read, parity reads the table itself", async (t) => {
  const path = join(tree(t), "s.json");
  const r = await runParity({ ...ctx(t, { mode: "ipvs", path }), shared: newScanShared() });
  t.match(r, { ok: true, facts: { state: "recorded", virtualServers: 3 } });
});

// A snapshot is trusted only when nobody but the agent's user (or root) could have written it: in a
// directory others can write, another user's file would raise a false services-lost-in-switch (this one
// "loses" 172.30.0.99) or, empty, hide a real loss. Refused snapshots are named and unread, never compared.
const NOBODY = 65534;
const losing = () =>
  JSON.stringify({
    format: SNAPSHOT_FORMAT,
    node: "n1",
    takenAt: Math.floor(Date.now() / 1000) - 60,
    virtualServers: [
      { kind: "service-ip", protocol: "TCP", address: "172.30.0.99", port: 80, reals: ["10.180.0.7:80"] },
    ],
  });

t.test("a snapshot another user could have written is refused by name, never compared", async (t) => {
  const compare = async (path: string) => {
    const r = await runParity(ctx(t, { mode: "nftables", path }));
    return r.ok ? r.facts : r;
  };

  // Another real user writes it in a world-writable directory, sticky like /tmp.
  const shared = tree(t);
  chmodSync(shared, 0o1777);
  const planted = join(shared, "s.json");
  // One text, made once: losing() stamps the clock, and a busy machine crosses a second between calls.
  const planting = losing();
  execFileSync(
    "/usr/bin/setpriv",
    [
      `--reuid=${NOBODY}`,
      `--regid=${NOBODY}`,
      "--clear-groups",
      "--",
      "/bin/sh",
      "-c",
      'cat > "$1"',
      "sh",
      planted,
    ],
    { input: planting },
  );
  t.equal(readFileSync(planted, "utf8"), planting, "nobody wrote the file");
  t.match(await compare(planted), {
    state: "corrupt",
    why: /^untrusted snapshot, not read: directory .* is writable by group or others \(mode 1777\)/,
  });
  // Our own file there is refused too: someone else could have replaced it or created it first.
  const ours = join(shared, "ours.json");
  writeFileSync(ours, losing(), { mode: 0o600 });
  t.match(await compare(ours), { state: "corrupt", why: /writable by group or others/ });
  // Nothing there yet in such a directory: not "no snapshot" either (it could have been removed).
  t.match(await compare(join(shared, "none.json")), { state: "corrupt", why: /untrusted snapshot/ });

  // A safe directory, but the file is another user's.
  const safe = tree(t);
  const theirs = join(safe, "s.json");
  writeFileSync(theirs, losing(), { mode: 0o600 });
  chownSync(theirs, NOBODY, NOBODY);
  t.match(await compare(theirs), {
    state: "corrupt",
    why: new RegExp(`untrusted snapshot, not read: .*s\\.json: the file is owned by uid ${NOBODY}`),
  });

  // A hard link to it under a name of ours: judged on the opened file (the inode), not the name.
  const hard = join(safe, "hard.json");
  linkSync(theirs, hard);
  t.match(await compare(hard), {
    state: "corrupt",
    why: new RegExp(`untrusted snapshot, not read: .*hard\\.json: the file is owned by uid ${NOBODY}`),
  });

  // Ours, but others may write it.
  const loose = join(safe, "loose.json");
  writeFileSync(loose, losing());
  chmodSync(loose, 0o666);
  t.match(await compare(loose), {
    state: "corrupt",
    why: /the file is writable by group or others \(mode 0666\)/,
  });

  // A symlink at the path, even to a good snapshot of ours: not followed.
  const good = join(safe, "good.json");
  writeFileSync(good, losing(), { mode: 0o600 });
  const link = join(safe, "link.json");
  symlinkSync(good, link);
  t.match(await compare(link), {
    state: "corrupt",
    why: /untrusted snapshot, not read: .*link\.json: a symlink/,
  });
  t.match(
    await compare(good),
    { state: "compared", counts: { missingAfter: 1 } },
    "the same file, read directly",
  );

  // A safe directory below one others can write (not sticky): that one could swap the whole directory.
  const open = tree(t);
  chmodSync(open, 0o777);
  mkdirSync(join(open, "inner"), { mode: 0o700 });
  writeFileSync(join(open, "inner", "s.json"), losing(), { mode: 0o600 });
  t.match(await compare(join(open, "inner", "s.json")), {
    state: "corrupt",
    why: /directory .*proxyscope-probe-[^/]+ is writable by group or others \(mode 0777\)/,
  });
  // Below a sticky one (/tmp's case), nobody else can rename our directory: trusted.
  mkdirSync(join(shared, "inner"), { mode: 0o700 });
  writeFileSync(join(shared, "inner", "s.json"), losing(), { mode: 0o600 });
  t.match(await compare(join(shared, "inner", "s.json")), { state: "compared" });
  t.match(
    await compare(join(safe, "no-dir", "s.json")),
    { state: "no-snapshot" },
    "no directory: none taken",
  );
  // No directory, but in one others can write (not sticky): they could have removed it, snapshot and
  // all, so its absence says nothing. Below a sticky one nobody else could remove ours: none taken.
  t.match(await compare(join(open, "gone", "deeper", "s.json")), {
    state: "corrupt",
    why: /^untrusted snapshot, not read: directory .*proxyscope-probe-[^/]+ is writable by group or others \(mode 0777\)/,
  });
  t.match(await compare(join(shared, "gone", "s.json")), { state: "no-snapshot" });
});

t.test("ipvs mode: no snapshot written where others could replace it", async (t) => {
  const open = tree(t);
  chmodSync(open, 0o1777);
  const path = join(open, "s.json");
  const r = await runParity(ctx(t, { mode: "ipvs", path }));
  t.match(r, {
    ok: true,
    facts: { state: "not-recorded", why: /^not written: directory .* is writable by group or others/ },
  });
  t.same(readdirSync(open), [], "nothing written");
});
