// The agent DaemonSet's capabilities, proven on a real kernel: in a fresh network namespace holding
// KUBE-* state, each listing tool the probes run is started with exactly the manifest's capabilities as
// its bounding set (as a container runtime would leave uid 0 after `drop: [ALL]` + `add`), and must
// read that state; with any one of those capabilities removed some tool must fail, so none is spare.
// (ipvsadm is not covered here: the host kernel has no IPVS; the hardening issue covers it in UML.)
import { spawnSync } from "node:child_process";
import t from "tap";
import { manifestObjects, which } from "./lib.js";

const ds = manifestObjects().find((x) => x.obj.kind === "DaemonSet")!.obj;
const caps: string[] = ds.spec.template.spec.containers[0].securityContext.capabilities.add;

const setup = [
  "iptables-legacy -t nat -N KUBE-SERVICES",
  "iptables-nft -t nat -N KUBE-NODEPORTS",
  "nft add table ip kube-proxy",
  "ipset create KUBE-CLUSTER-IP hash:ip,port",
];
const probes: { tool: string; args: string; expect: RegExp }[] = [
  { tool: "iptables-legacy-save", args: "-t nat", expect: /KUBE-SERVICES/ },
  { tool: "iptables-nft-save", args: "-t nat", expect: /KUBE-NODEPORTS/ },
  { tool: "nft", args: "list tables", expect: /table ip kube-proxy/ },
  { tool: "ipset", args: "list -name", expect: /KUBE-CLUSTER-IP/ },
  { tool: "ip", args: "-j addr show", expect: /"ifname":"lo"/ },
];

// One shell inside `unshare -n`: set the state up with full privileges, then run each tool under
// setpriv with a given bounding set and print a marker per tool.
function runInNetns(bounding: string[]): { ok: Map<string, boolean>; raw: string } {
  const set = ["-all", ...bounding.map((c) => `+${c.toLowerCase()}`)].join(",");
  const script = [
    ...setup.map((c) => `${c} >/dev/null 2>&1 || { echo "SETUP FAILED: ${c}"; exit 99; }`),
    ...probes.map(
      (p) =>
        `out=$(setpriv --inh-caps=-all --bounding-set=${set} -- ${p.tool} ${p.args} 2>&1); rc=$?; ` +
        `printf '%s\\n' "== ${p.tool} rc=$rc"; printf '%s\\n' "$out" | head -50`,
    ),
  ].join("\n");
  const r = spawnSync("unshare", ["-n", "sh", "-c", script], { encoding: "utf8", timeout: 60_000 });
  if (r.status === 99 || r.status === null) throw new Error(`netns setup: ${r.stdout}${r.stderr}`);
  const ok = new Map<string, boolean>();
  const sections = r.stdout.split(/^== /m).slice(1);
  for (const p of probes) {
    const sec = sections.find((s) => s.startsWith(`${p.tool} `)) ?? "";
    ok.set(p.tool, /^\S+ rc=0\n/.test(sec) && p.expect.test(sec));
  }
  return { ok, raw: r.stdout + r.stderr };
}

const missing = [
  "unshare",
  "setpriv",
  ...probes.map((p) => p.tool),
  "iptables-legacy",
  "iptables-nft",
].filter((c) => which(c) === null);
const isRoot = process.getuid?.() === 0;

t.test(
  "the manifest's capabilities are enough, and each is needed",
  {
    skip:
      (!isRoot && "needs root (network namespaces)") ||
      (missing.length > 0 && `missing ${missing.join(", ")}`),
  },
  async (t) => {
    t.same([...caps].sort(), ["NET_ADMIN", "NET_RAW"]);
    const withAll = runInNetns(caps);
    for (const p of probes)
      t.ok(withAll.ok.get(p.tool), `${p.tool} reads the state with ${caps.join("+")}\n${withAll.raw}`);

    const none = runInNetns([]);
    t.notOk(none.ok.get("nft"), "sanity: without capabilities nft cannot list");
    t.ok(none.ok.get("ip"), "ip addr needs no capability");

    for (const c of caps) {
      const less = runInNetns(caps.filter((x) => x !== c));
      const broken = probes.filter((p) => !less.ok.get(p.tool)).map((p) => p.tool);
      t.ok(broken.length > 0, `without ${c} something breaks: ${broken.join(", ")}`);
    }
    const noRaw = runInNetns(caps.filter((x) => x !== "NET_RAW"));
    t.notOk(
      noRaw.ok.get("iptables-legacy-save"),
      "iptables-legacy-save needs NET_RAW (libiptc opens a raw socket)",
    );
    t.ok(
      noRaw.ok.get("nft") && noRaw.ok.get("ipset") && noRaw.ok.get("iptables-nft-save"),
      "netlink listing needs only NET_ADMIN",
    );
  },
);

// Every probe, not only the listing tools: the built agent's whole scan (`scan --json`) in a fresh
// network namespace holding KUBE-* state, with the manifest's capabilities as the bounding set, with
// none, and with each one removed. File probes (kernel, os-release, kernel-modules, sysctls, ipvs'
// /proc/net/ip_vs, nft-version's package database) and `ip` need no capability, since the files are
// world-readable and even CAP_DAC_OVERRIDE is dropped here; the netfilter probes need NET_ADMIN, and
// iptables' legacy backend NET_RAW.
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
const CLI = new URL("../../../dist/agent/cli.js", import.meta.url).pathname;
// The witness of kube-proxy's nft as the image lays it out (ld.so, lib/, nft), here the system's nft: it
// runs under the same capabilities as the agent's own tools (the DaemonSet needs nothing more for it).
const LOADER = ["/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"].find((l) => existsSync(l));
const WITNESS = mkdtempSync(join(tmpdir(), "proxyscope-witness-"));
t.teardown(() => rmSync(WITNESS, { recursive: true, force: true }));
mkdirSync(join(WITNESS, "lib"));
if (LOADER !== undefined) symlinkSync(LOADER, join(WITNESS, "ld.so"));
symlinkSync("/usr/sbin/nft", join(WITNESS, "nft"));
/** The witness's outcome in the last scanProbes run. */
let witnessOutcome: string | undefined;

function scanProbes(bounding: string[]): Map<string, string> {
  const set = ["-all", ...bounding.map((c) => `+${c.toLowerCase()}`)].join(",");
  const script = [
    ...setup.map((c) => `${c} >/dev/null 2>&1 || { echo "SETUP FAILED: ${c}"; exit 99; }`),
    `exec setpriv --inh-caps=-all --bounding-set=${set} -- ${process.execPath} ${CLI} scan --json ` +
      "--kube-proxy-metrics-url http://127.0.0.1:1 --kube-proxy-health-url http://127.0.0.1:1 --call-timeout-ms 5000 " +
      `--kube-proxy-nft-dir ${WITNESS}`,
  ].join("\n");
  const r = spawnSync("unshare", ["-n", "sh", "-c", script], { encoding: "utf8", timeout: 120_000 });
  const report = JSON.parse(r.stdout.slice(r.stdout.indexOf("{"))) as {
    probes: { name: string; ok: boolean; error?: { kind: string } }[];
    facts: { kubeProxyNft?: { outcome: string } | null };
  };
  witnessOutcome = report.facts.kubeProxyNft?.outcome;
  return new Map(report.probes.map((p) => [p.name, p.ok ? "ok" : (p.error?.kind ?? "failed")]));
}

t.test(
  "every probe of a whole scan: which need which capability",
  {
    skip:
      (!isRoot && "needs root (network namespaces)") ||
      (missing.length > 0 && `missing ${missing.join(", ")}`) ||
      (!existsSync(CLI) && "run npx tsc -p . first"),
  },
  async (t) => {
    const full = scanProbes(caps);
    t.equal(witnessOutcome, "ok", "kube-proxy's nft witness lists the sets with the manifest's capabilities");
    const none = scanProbes([]);
    t.equal(witnessOutcome, "failed", "and cannot without them (a failed ask, not a crash)");
    const kubeProxy = (n: string) => n.startsWith("kube-proxy-");
    for (const [name, state] of full) {
      if (kubeProxy(name)) continue; // no kube-proxy in this namespace: unreachable either way
      t.equal(state, "ok", `${name} succeeds with ${caps.join("+")}`);
    }
    const needCaps = ["nftables", "iptables", "ipsets"];
    for (const [name, state] of none) {
      if (kubeProxy(name)) continue;
      if (needCaps.includes(name)) t.equal(state, "not-permitted", `${name} fails without capabilities`);
      else t.equal(state, "ok", `${name} needs no capability`);
    }
    const noAdmin = scanProbes(caps.filter((c) => c !== "NET_ADMIN"));
    for (const n of needCaps) t.equal(noAdmin.get(n), "not-permitted", `${n} needs NET_ADMIN`);
    t.equal(witnessOutcome, "failed", "the witness needs NET_ADMIN too");
    const noRaw = scanProbes(caps.filter((c) => c !== "NET_RAW"));
    t.equal(noRaw.get("iptables"), "not-permitted", "iptables (legacy backend) needs NET_RAW");
    t.equal(noRaw.get("nftables"), "ok", "nftables needs only NET_ADMIN");
    t.equal(noRaw.get("ipsets"), "ok", "ipsets needs only NET_ADMIN");
    t.comment(`without capabilities: ${JSON.stringify(Object.fromEntries(none))}`);
  },
);
