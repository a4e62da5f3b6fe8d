import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { setTimeout as sleep } from "node:timers/promises";
import { withNetns, type NetNs } from "../helpers/netns.js";
import { linkCommands, loadProfiles } from "../helpers/profiles.js";
import {
  getIn,
  kubeProxyConfig,
  METRICS,
  realKubeProxy,
  standinKubeconfig,
  startRealKubeProxy,
} from "../helpers/real-kube-proxy.js";
import { bootUml, DEFAULT_MODULES, hostScratchDir } from "../helpers/uml.js";
import { profileCluster, RECORD_NODE_NAME } from "./kube-proxy-cluster.js";
import type { RecordingSpec } from "./profile.js";
import { RECORDINGS, recordedFiles, recordingKey, recordingsOf } from "./recorded.js";

export { recordingsOf };

// Records kube-proxy's own kernel state for every profile node that holds some, with the REAL binary
// (test/kube-proxy/build.mjs) against the API server stand-in (test/standins/apiserver.ts): the node's
// links and addresses, its kube-proxy config (scheduler, strictARP, nodePortAddresses) and the profile's
// Services (kube-proxy-cluster.ts). nftables and iptables modes run in a network namespace on the host kernel; ipvs
// mode needs IPVS, so it runs in ONE User-Mode Linux boot, one namespace per recording. Each file is
// saved under test/fixtures/kube-proxy/profiles/<recordingKey>/ with the release and the commands in a
// header, members and virtual servers sorted (the kernel lists hash sets in no fixed order).
//
//   npm run build && node test/kube-proxy/build.mjs
//   node --import @tapjs/typescript/import test/profiles/record-kube-proxy.ts [nftables|iptables|ipvs [VERSION]]   (root)
//
// test/kernel/profiles-netns.test.ts and profiles-uml.test.ts run the same recorders and fail when
// the binary's output no longer matches the saved files.

/** Everything kube-proxy is started with for a recording, beyond the profile's own config. */
export function recordingConfig(
  mode: "ipvs" | "nftables" | "iptables",
  spec: RecordingSpec,
  kubeconfig: string,
): object {
  // IPv4-only pod network (the profiles' nodes are IPv4-only); the profile's ipvs / nodePortAddresses.
  return kubeProxyConfig(mode, kubeconfig, { clusterCIDR: "10.244.0.0/16", ...spec.config });
}

const sortedLines = (lines: string[]) => [...lines].sort();

/**
 * A dumped file as it is saved and compared: the tools' own comment and counter noise out, hash-set
 * members and IPVS lines sorted (their kernel order is not kube-proxy's doing).
 */
export function normalize(file: string, text: string): string {
  const lines = text.split("\n").filter((l) => l.trim() !== "" && !l.startsWith("#"));
  switch (file.replace(".after.", ".")) {
    case "iptables.save":
    case "ip6tables.save":
      return lines.map((l) => l.replace(/\[\d+:\d+\]$/, "[0:0]")).join("\n");
    case "iptables-nft.save":
    case "ip6tables-nft.save":
      return iptablesSorted(lines.map((l) => l.replace(/\[\d+:\d+\]$/, "[0:0]")));
    case "ipset.save": {
      // kube-proxy creates its sets from a map (no fixed order); initval is the kernel's random hash seed.
      const create = lines
        .filter((l) => l.startsWith("create "))
        .map((l) => l.replace(/ initval 0x[0-9a-f]+/, ""));
      return [...sortedLines(create), ...sortedLines(lines.filter((l) => l.startsWith("add ")))].join("\n");
    }
    case "ipvsadm.save":
    case "kube-ipvs0.addresses":
      return sortedLines(lines).join("\n");
    default:
      // nft list: element lists one per line, sorted within each set or map.
      return nftSorted(lines.join("\n"));
  }
}

/**
 * `nft list table` with its sets, maps and chains sorted by name (kube-proxy adds per-Service chains
 * from a map: no fixed order) and every `elements = { a, b, ... }` block's members one per line, sorted.
 */
function nftSorted(text: string): string {
  const lines = elementsSorted(text).split("\n");
  const out: string[] = [];
  let blocks: string[][] = [];
  let current: string[] | null = null;
  for (const l of lines) {
    if (current) {
      current.push(l);
      if (l === "\t}") current = null;
    } else if (/^\t(set|map|chain|flowtable) /.test(l)) blocks.push((current = [l]));
    else if (l === "}") {
      // Sets and maps before the chains whose rules name them (as `nft list` prints them), each by name.
      const rank = (h: string) => `${/^\tchain /.test(h) ? 1 : 0}${h}`;
      blocks.sort((a, b) => (rank(a[0]!) < rank(b[0]!) ? -1 : rank(a[0]!) > rank(b[0]!) ? 1 : 0));
      out.push(...blocks.flat(), l);
      blocks = [];
    } else out.push(l);
  }
  return out.join("\n");
}

/**
 * `iptables-save` of iptables mode with each table's chain declarations and rules grouped by chain,
 * chains by name. kube-proxy writes its per-Service chains, and their jumps from KUBE-SERVICES and
 * KUBE-NODEPORTS, from a Go map (no fixed order); within every other chain the rule order is kept (the
 * KUBE-SVC-* probabilities and the jumps' order are kube-proxy's doing). In KUBE-SERVICES and
 * KUBE-NODEPORTS the per-Service rules are sorted and KUBE-SERVICES' jump to KUBE-NODEPORTS stays last,
 * where kube-proxy writes it (pkg/proxy/iptables/proxier.go syncProxyRules).
 */
function iptablesSorted(lines: string[]): string {
  const out: string[] = [];
  let decl: string[] = [];
  let rules = new Map<string, string[]>();
  const flush = () => {
    out.push(...sortedLines(decl));
    for (const chain of [...rules.keys()].sort()) {
      const r = rules.get(chain)!;
      if (chain === "KUBE-SERVICES" || chain === "KUBE-NODEPORTS") {
        const last = r.filter((l) => / -j KUBE-NODEPORTS$/.test(l));
        out.push(...sortedLines(r.filter((l) => !last.includes(l))), ...last);
      } else out.push(...r);
    }
    decl = [];
    rules = new Map();
  };
  for (const l of lines) {
    if (l.startsWith(":")) decl.push(l);
    else if (l.startsWith("-A ")) {
      const chain = l.split(" ")[1]!;
      rules.set(chain, [...(rules.get(chain) ?? []), l]);
    } else {
      if (l === "COMMIT") flush();
      out.push(l);
    }
  }
  return out.join("\n");
}

function elementsSorted(text: string): string {
  return text.replace(/elements = \{([^}]*)\}/g, (_, inner: string) => {
    const members = inner
      .split(",")
      .map((m) => m.trim())
      .filter(Boolean)
      .sort();
    return `elements = {\n\t\t\t${members.join(",\n\t\t\t")} }`;
  });
}

export const header = (spec: RecordingSpec, file: string, dumpedBy: string) =>
  [
    `# Recorded from the REAL kube-proxy ${spec.version} (test/kube-proxy/build.mjs), ${spec.mode} mode, by`,
    `# test/profiles/record-kube-proxy.ts: \`kube-proxy --config=<recordingConfig> --hostname-override=${RECORD_NODE_NAME}\``,
    `# against test/standins/apiserver.ts with kube-proxy-cluster.ts; node ${spec.nodeIps.join(", ")}.`,
    file.includes(".after.")
      ? `# Then restarted in ${spec.then} mode on the same node; dumped with \`${dumpedBy}\` after (synced, or exited: nftables in UML).`
      : `# Dumped with \`${dumpedBy}\` once kube-proxy had synced; normalized by normalize() (${file}).`,
    "",
  ].join("\n");

const DUMPED_BY: Record<string, string> = {
  "nft-ip.nft": "nft list table ip kube-proxy",
  "nft-ip6.nft": "nft list table ip6 kube-proxy",
  "ipset.save": "ipset save",
  "iptables.save": "iptables-legacy-save",
  "ip6tables.save": "ip6tables-legacy-save",
  "iptables-nft.save": "iptables-nft-save",
  "ip6tables-nft.save": "ip6tables-nft-save",
  "ipvsadm.save": "ipvsadm -Sn",
  "kube-ipvs0.addresses": "ip -o addr show dev kube-ipvs0",
};

/** Sync timestamps on /metrics above 0: one series per IP family from v1.33, one before. */
function syncedSeries(metrics: string): number {
  return [...metrics.matchAll(/^kubeproxy_sync_proxy_rules_last_timestamp_seconds(?:\{[^}]*\})? (\S+)$/gm)]
    .map((m) => Number(m[1]))
    .filter((v) => v > 0).length;
}
export const seriesWanted = (version: string) => (Number(version.split(".")[1]) >= 33 ? 2 : 1);

/** nftables or iptables mode on the host kernel: the files of one recording, normalized, by file name. */
export async function recordInNetns(spec: RecordingSpec, bin: string): Promise<Record<string, string>> {
  if (spec.mode === "ipvs") throw new Error("ipvs mode needs IPVS: it is recorded in UML");
  const mode = spec.mode;
  return withNetns(async (ns: NetNs) => {
    ns.must(["ip", "link", "set", "lo", "up"]);
    for (const c of linkCommands({ kernel: "netns", links: spec.links, kubeProxy: null }))
      ns.must(["ip", ...c]);
    ns.must(["ip", "route", "add", "default", "dev", "eth0"]);
    const extra = { clusterCIDR: "10.244.0.0/16", ...spec.config };
    // iptables mode execs the host's `iptables` (iptables-nft here, as the profiles load it).
    const kp = await startRealKubeProxy(ns, bin, mode, profileCluster(spec), extra);
    try {
      // Both families' proxiers: the IPv6 one syncs after the IPv4 one.
      const end = Date.now() + 120_000;
      while (syncedSeries(getIn(ns, `http://${METRICS}/metrics`)?.body ?? "") < seriesWanted(spec.version)) {
        if (Date.now() > end) throw new Error(`kube-proxy ${spec.version}: IPv6 never synced\n${kp.log()}`);
        await sleep(300);
      }
      const dump = (file: string, argv: string[]) => normalize(file, ns.must(argv));
      const files: Record<string, string> =
        mode === "nftables"
          ? {
              "nft-ip.nft": dump("nft-ip.nft", ["nft", "list", "table", "ip", "kube-proxy"]),
              "nft-ip6.nft": dump("nft-ip6.nft", ["nft", "list", "table", "ip6", "kube-proxy"]),
            }
          : {
              "iptables-nft.save": dump("iptables-nft.save", ["iptables-nft-save"]),
              "ip6tables-nft.save": dump("ip6tables-nft.save", ["ip6tables-nft-save"]),
            };
      return files;
    } finally {
      await kp.stop();
    }
  });
}

const shq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The guest shell that records ipvs-mode specs in User-Mode Linux, one namespace each, into
 * $OUT/<key>/<file>.raw. $OUT/<key>/cluster.json, config-<mode>.json and kubeconfig must be there
 * (writeInputs). Needs the vxlan module (the CNI links). It turns `set -e` off: a recording that fails
 * is named on the console (`@@RECORD-FAILED <key>@@`) and the next one still runs.
 */
export function ipvsGuestScript(specs: Map<string, RecordingSpec>, bins: Map<string, string>): string {
  const lines = [
    "set +e",
    // What kube-proxy execs, as its image provides it: the legacy iptables (UML has no ip-family
    // nftables) and a modprobe that finds UML's modules (as real-kube-proxy-ipvs-uml-guest.sh does).
    "mkdir -p /run/kp-bin",
    "for t in iptables ip6tables; do",
    '  ln -sf "/usr/sbin/$t-legacy" "/run/kp-bin/$t"',
    '  ln -sf "/usr/sbin/$t-legacy-save" "/run/kp-bin/$t-save"',
    '  ln -sf "/usr/sbin/$t-legacy-restore" "/run/kp-bin/$t-restore"',
    "done",
    `printf '#!/bin/sh\\nexec /sbin/modprobe -d /run/mods "$@"\\n' >/run/kp-bin/modprobe`,
    "chmod 755 /run/kp-bin/modprobe",
    "# synced NS SERIES: SERIES families' sync timestamps above 0 on kube-proxy's /metrics in NS.",
    "synced() {",
    `  n=$(ip netns exec "$1" curl -s --max-time 30 http://${METRICS}/metrics 2>/dev/null | grep -Ec '^kubeproxy_sync_proxy_rules_last_timestamp_seconds(\\{[^}]*\\})? [1-9]')`,
    '  [ "${n:-0}" -ge "$2" ]',
    "}",
    "# dump NS DIR SUFFIX: kube-proxy's state in NS, read with the tools themselves.",
    "dump() {",
    '  ip netns exec "$1" ipset save >"$2/ipset.$3save.raw"',
    '  ip netns exec "$1" iptables-legacy-save >"$2/iptables.$3save.raw"',
    '  ip netns exec "$1" ip6tables-legacy-save >"$2/ip6tables.$3save.raw"',
    '  ip netns exec "$1" ipvsadm -Sn >"$2/ipvsadm.$3save.raw"',
    `  { ip -n "$1" -o addr show dev kube-ipvs0 2>/dev/null || true; } | awk '{print $4}' >"$2/kube-ipvs0.$3addresses.raw"`,
    "}",
    "# record_ipvs NS DIR BIN SERIES [THEN]: the stand-in and kube-proxy (ipvs) in NS until SERIES families",
    "# synced, the dumps; then, with THEN, kube-proxy restarted in that mode and the dumps again (.after.).",
    "record_ipvs() {",
    '  ip netns exec "$1" node dist/test/standins/apiserver.js "$2/cluster.json" >"$2/apiserver.log" 2>&1 &',
    "  api=$!",
    '  until grep -q "^ready" "$2/apiserver.log" 2>/dev/null; do',
    '    kill -0 $api 2>/dev/null || { echo "$1: API stand-in exited"; cat "$2/apiserver.log"; return 1; }',
    "    sleep 0.2",
    "  done",
    "  for mode in ipvs ${5:-}; do",
    `    ip netns exec "$1" env PATH="/run/kp-bin:$PATH" "$3" --config="$2/config-$mode.json" --hostname-override=${RECORD_NODE_NAME} -v=2 >"$2/kp-$mode.log" 2>&1 &`,
    "    kp=$!",
    "    started=$(date +%s)",
    '    [ "$mode" = ipvs ] && sfx= || sfx=after.',
    '    while ! synced "$1" "$4"; do',
    "      if ! kill -0 $kp 2>/dev/null; then",
    // nftables mode exits in UML once its cleanup ran (no ip-family nftables): the cleanup is the point.
    '        wait $kp; echo "$1: kube-proxy $mode exited $? after $(( $(date +%s) - started )) s"; kp=',
    '        [ "$mode" = nftables ] && break',
    '        tail -30 "$2/kp-$mode.log"; kill $api; return 1',
    "      fi",
    '      [ $(( $(date +%s) - started )) -lt 900 ] || { echo "$1: $mode: no sync in 900 s"; kill $kp $api; return 1; }',
    "      sleep 0.5",
    "    done",
    '    echo "$1: $mode done in $(( $(date +%s) - started )) s"',
    '    dump "$1" "$2" "$sfx"',
    // SIGTERM, as the kubelet stops a pod: kube-proxy leaves its state for the next mode to find.
    '    [ -z "$kp" ] || { kill -TERM $kp; wait $kp 2>/dev/null; }',
    "  done",
    "  kill -TERM $api; wait $api 2>/dev/null",
    '  ip netns del "$1"',
    "}",
  ];
  let i = 0;
  for (const [key, spec] of specs) {
    const ns = `rec${++i}`;
    lines.push(`# --- ${key}`, `proxyscope_netns ${ns}`);
    for (const c of linkCommands({ kernel: "uml", links: spec.links, kubeProxy: null }))
      lines.push(["ip", "-n", ns, ...c].map(shq).join(" "));
    lines.push(`ip -n ${ns} route add default dev eth0`);
    lines.push(
      `record_ipvs ${ns} "$OUT/${key}" ${shq(bins.get(spec.version)!)} ${seriesWanted(spec.version)} ${spec.then ?? ""} || echo "@@RECORD-FAILED ${key}@@"`,
    );
  }
  lines.push("echo record-done");
  return lines.join("\n");
}

/** The inputs of each ipvs recording, under out/<key>/. */
export function writeInputs(out: string, specs: Map<string, RecordingSpec>): void {
  for (const [key, spec] of specs) {
    const dir = join(out, key);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "cluster.json"),
      JSON.stringify({ ...profileCluster(spec), token: null, listen: "127.0.0.1:6443" }),
    );
    writeFileSync(join(dir, "kubeconfig"), JSON.stringify(standinKubeconfig(6443)));
    for (const mode of ["ipvs", ...(spec.then ? [spec.then] : [])] as const)
      writeFileSync(
        join(dir, `config-${mode}.json`),
        JSON.stringify(recordingConfig(mode, spec, join(dir, "kubeconfig"))),
      );
  }
}

/** The UML modules an ipvs recording needs beyond the defaults (the CNI links' vxlan). */
export const RECORD_MODULES = ["vxlan"];

/** Reads what the guest dumped for one recording, normalized; throws naming a missing dump. */
export function readIpvsDumps(out: string, key: string, spec: RecordingSpec): Record<string, string> {
  const files: Record<string, string> = {};
  for (const f of recordedFiles(spec))
    files[f] = normalize(f, readFileSync(join(out, key, `${f}.raw`), "utf8"));
  return files;
}

/** The binaries the specs need, each built by test/kube-proxy/build.mjs; throws naming one missing. */
export function binariesFor(specs: Iterable<RecordingSpec>): Map<string, string> {
  const bins = new Map<string, string>();
  for (const s of specs) {
    const bin = realKubeProxy(s.version);
    if (bin === null)
      throw new Error(`kube-proxy ${s.version} is not built: node test/kube-proxy/build.mjs ${s.version}`);
    bins.set(s.version, bin);
  }
  return bins;
}

function save(spec: RecordingSpec, files: Record<string, string>): void {
  const dir = join(RECORDINGS, recordingKey(spec));
  mkdirSync(dir, { recursive: true });
  for (const [f, text] of Object.entries(files))
    writeFileSync(join(dir, f), `${header(spec, f, DUMPED_BY[f.replace(".after.", ".")] ?? f)}${text}\n`);
}

async function main(argv: string[]): Promise<number> {
  const [only, version] = argv;
  mkdirSync(RECORDINGS, { recursive: true });
  const all = recordingsOf(await loadProfiles());
  const pick = (mode: RecordingSpec["mode"]) =>
    new Map(
      [...all].filter(
        ([, s]) =>
          s.mode === mode &&
          (only === undefined || only === mode) &&
          (version === undefined || version === s.version),
      ),
    );
  const netns = new Map([...pick("nftables"), ...pick("iptables")]);
  const bins = binariesFor([...netns.values(), ...pick("ipvs").values()]);
  for (const [key, spec] of netns) {
    save(spec, await recordInNetns(spec, bins.get(spec.version)!));
    process.stderr.write(`recorded ${key}\n`);
  }
  const ipvs = pick("ipvs");
  if (ipvs.size > 0) {
    const scratch = hostScratchDir("proxyscope-record-kp-");
    try {
      writeInputs(scratch.path, ipvs);
      const boot = await bootUml({
        script: `set -u\n. test/helpers/uml/guest-lib.sh\nOUT=${shq(scratch.path)}\n${ipvsGuestScript(ipvs, bins)}\n`,
        modules: [...DEFAULT_MODULES, ...RECORD_MODULES],
        memMb: 1024,
        timeoutMs: 3_000_000,
      });
      process.stderr.write(boot.output);
      for (const [key, spec] of ipvs) {
        save(spec, readIpvsDumps(scratch.path, key, spec));
        process.stderr.write(`recorded ${key}\n`);
      }
    } finally {
      scratch.remove();
    }
  }
  // Recordings no profile asks for any more go.
  if (only === undefined)
    for (const d of readdirSync(RECORDINGS, { withFileTypes: true }))
      if (d.isDirectory() && !all.has(d.name)) rmSync(join(RECORDINGS, d.name), { recursive: true });
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = await main(process.argv.slice(2));
