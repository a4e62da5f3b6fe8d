// Boots User-Mode Linux (Debian's user-mode-linux, kernel 6.1) with the host's filesystem as its root
// and runs one shell script as init. The guest has its own kernel: IPVS, ipsets, iptables-legacy,
// dummy links and network namespaces work there without touching the host. The host's node runs
// inside it, so a test can run our probes (built into dist/) against real kernel state.
//
// Layout of a boot:
//   <workDir>/init.sh    written here: mounts, modules, then runs script.sh between two markers
//   <workDir>/script.sh  the caller's script, run by /bin/sh with cwd = the repository root
//   <workDir>/<umid>/    UML's pid file and mconsole socket (uml_dir=)
// The work directory is on the host's disk, outside /tmp and /run (tmpfs inside the guest), so
// whatever the script writes under $PROXYSCOPE_WORKDIR lands on the host; the init script syncs
// before powering off.
import { spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { accessSync, constants, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { umlHostEnv as benchUmlHostEnv, umlXstateShim } from "../../bench/lib/uml.js";
import { spawnOwned } from "./children.js";

export const UML_KERNEL = process.env.PROXYSCOPE_UML_KERNEL ?? "/usr/bin/linux.uml";
export const UML_MODULES_ROOT = "/usr/lib/uml/modules";
/** The repository root: the guest sees the same path, since its root is the host's "/". */
export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, "");
export const GUEST_LIB = join(REPO_ROOT, "test/helpers/uml/guest-lib.sh");
/** Preloaded into every UML boot (bench/lib/uml.ts says why). */
export const UML_XSTATE_SHIM = umlXstateShim(REPO_ROOT);
const umlHostEnv = (home: string, tmpdir: string) => benchUmlHostEnv(REPO_ROOT, home, tmpdir);

/** Modules by purpose; boots load `DEFAULT_MODULES` (all of them) unless told otherwise. */
export const MODULE_GROUPS = {
  net: ["ipv6", "dummy", "veth", "bridge"],
  ipvs: [
    "ip_vs",
    "ip_vs_rr",
    "ip_vs_wrr",
    "ip_vs_lc",
    "ip_vs_wlc",
    "ip_vs_sh",
    "ip_vs_sed",
    "ip_vs_nq",
    "ip_vs_mh",
  ],
  ipset: [
    "ip_set",
    "ip_set_hash_ip",
    "ip_set_hash_ipport",
    "ip_set_hash_ipportip",
    "ip_set_hash_ipportnet",
    "ip_set_hash_net",
    "ip_set_bitmap_port",
    "xt_set",
  ],
  // nft works (lists, reads) once nf_tables is in; UML's build still has no ip-family tables.
  nftables: ["nf_tables"],
  iptables: [
    "nf_conntrack",
    "ip_tables",
    "iptable_nat",
    "iptable_filter",
    "iptable_mangle",
    "iptable_raw",
    "ip6_tables",
    "ip6table_nat",
    "ip6table_filter",
    "ip6table_mangle",
    "xt_comment",
    "xt_mark",
    "xt_conntrack",
    "xt_addrtype",
    "xt_MASQUERADE",
    "xt_nat",
    "xt_multiport",
    "xt_statistic",
    "xt_tcpudp",
    "xt_ipvs",
    // kube-proxy's ipvs-mode rules match on bridge ports and reject Services without endpoints.
    "xt_physdev",
    "ipt_REJECT",
    "ip6t_REJECT",
  ],
} as const;
export const DEFAULT_MODULES: readonly string[] = Object.values(MODULE_GROUPS).flat();

export interface UmlOptions {
  /** Shell script (POSIX sh) run as the guest's payload; its exit status is returned. */
  script: string;
  /** Guest memory; node inside the guest wants at least 256. Default 512. */
  memMb?: number;
  /** Hard limit for the whole boot; the UML process group is killed past it. Default 600 s (a loaded machine slows a guest). */
  timeoutMs?: number;
  /** Kernel modules to load before the script runs. Default: DEFAULT_MODULES. */
  modules?: readonly string[];
  /** Extra environment for the script (names must be shell identifiers). */
  env?: Record<string, string>;
  /** Keep the work directory after the boot (it is removed otherwise). */
  keepWorkDir?: boolean;
  /** The UML kernel binary; default UML_KERNEL ($PROXYSCOPE_UML_KERNEL or /usr/bin/linux.uml). */
  kernel?: string;
}

export interface UmlResult {
  /** The script's exit status. */
  exitCode: number;
  /** What the script printed (stdout and stderr, interleaved), cut from the console between markers. */
  output: string;
  /** The whole console, kernel messages included, with CRs removed. */
  console: string;
  /** Modules that did not load (named by the guest). */
  modulesFailed: string[];
  durationMs: number;
  /** The host directory the script could write to ($PROXYSCOPE_WORKDIR); gone unless keepWorkDir. */
  workDir: string;
}

export class UmlUnavailableError extends Error {
  override name = "UmlUnavailableError";
}
export class UmlBootError extends Error {
  override name = "UmlBootError";
  constructor(
    message: string,
    readonly console: string,
    /** The boot's work directory (already removed unless keepWorkDir). */
    readonly workDir = "",
  ) {
    super(`${message}\n--- last console lines ---\n${tail(console, 40)}`);
  }
}

/** Why UML cannot run here, or null when it can. Tests use it for `skip`. */
export function umlUnavailableReason(kernel = UML_KERNEL): string | null {
  try {
    accessSync(kernel, constants.X_OK);
  } catch {
    return `${kernel} not found or not executable: install Debian's user-mode-linux package (or set PROXYSCOPE_UML_KERNEL)`;
  }
  if (!existsSync(UML_MODULES_ROOT)) {
    return `${UML_MODULES_ROOT} is missing: user-mode-linux is installed without its modules`;
  }
  if (!existsSync(GUEST_LIB)) return `${GUEST_LIB} is missing`;
  if (!existsSync(UML_XSTATE_SHIM)) {
    return `${UML_XSTATE_SHIM} is missing: run \`npm run build\` (scripts/build-native.sh builds it)`;
  }
  return null;
}

let hostProbe: { result: string | null } | null = null;

/**
 * Why User-Mode Linux, installed, cannot run a single process on this host, or null when it can.
 * UML 6.1 (Debian 12's user-mode-linux) restores each guest process's registers with
 * ptrace(PTRACE_SETREGSET, NT_X86_XSTATE) from a fixed-size buffer, which a host kernel with a larger
 * XSAVE area (AMX: 11,008 bytes) refuses with EFAULT; UML_XSTATE_SHIM makes that call whole, so this is
 * null on such hosts too. What is left is a host the shim does not cover. Checked by one boot of
 * /bin/true as init, once per test process, with the same shim every boot uses.
 */
export function umlHostIncompatible(kernel = UML_KERNEL): string | null {
  if (hostProbe !== null) return hostProbe.result;
  const dir = mkdtempSync(join(workRoot(), "proxyscope-uml-probe-"));
  try {
    const r = spawnSync(
      kernel,
      [
        "mem=64M",
        "root=/dev/root",
        "rootfstype=hostfs",
        "rootflags=/",
        "rw",
        "init=/bin/true",
        "con=null",
        "con0=fd:0,fd:1",
        `uml_dir=${dir}`,
        `umid=probe-${randomBytes(4).toString("hex")}`,
      ],
      {
        input: "",
        encoding: "utf8",
        timeout: 300_000,
        killSignal: "SIGKILL",
        maxBuffer: 4 << 20,
        env: umlHostEnv(dir, dir),
      },
    );
    const out = `${r.stdout ?? ""}${r.stderr ?? ""}`;
    const fp = /userspace - ptrace set fp regs failed, errno = (\d+)/.exec(out);
    hostProbe = {
      result: fp
        ? `User-Mode Linux 6.1 cannot run a process on this host even with ${UML_XSTATE_SHIM}: ptrace(PTRACE_SETREGSET, NT_X86_XSTATE) fails with errno ${fp[1]} ("userspace - ptrace set fp regs failed"); Debian 12 packages no newer UML, so the IPVS and kube-ipvs0 tests cannot run on this machine`
        : null,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return hostProbe.result;
}

/**
 * False, with a skipped test that names the reason, when this host cannot run UML at all (see
 * umlHostIncompatible): reported as a skip, never as a pass, and never silently.
 */
export function umlRunsHere(t: {
  test(name: string, opts: { skip: string }, fn: () => void): unknown;
}): boolean {
  const why = umlHostIncompatible();
  if (why === null) return true;
  t.test("User-Mode Linux on this host", { skip: why }, () => {});
  return false;
}

const hiddenInGuest = (path: string): boolean => /^\/(tmp|run)(\/|$)/.test(path);

/**
 * Where work directories go: on the host's disk, not /tmp or /run (tmpfs in the guest).
 * $PROXYSCOPE_UML_WORKDIR, else the temp dir when the guest sees it (`npm test` sets TMPDIR to a
 * directory of its own under /var/tmp, and fails the run on what is left in it), else /var/tmp.
 */
export function workRoot(): string {
  const given = process.env.PROXYSCOPE_UML_WORKDIR;
  if (given === undefined) return hiddenInGuest(tmpdir()) ? "/var/tmp" : tmpdir();
  if (hiddenInGuest(given)) {
    throw new UmlUnavailableError(
      `PROXYSCOPE_UML_WORKDIR=${given} is under /tmp or /run, which the guest hides`,
    );
  }
  return given;
}

/** A directory on the host's disk that a guest script can write to (pass it in `env`); remove it when done. */
export function hostScratchDir(prefix = "proxyscope-"): { path: string; remove: () => void } {
  const path = mkdtempSync(join(workRoot(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

// UML backs guest memory with a file it maps executable: tmpfs keeps that fast, and a noexec mount
// would make the boot fail. /dev/shm when it is a tmpfs without noexec, else the work root (disk).
function memoryDir(): string {
  try {
    const shm = readFileSync("/proc/self/mounts", "utf8")
      .split("\n")
      .map((l) => l.split(" "))
      .filter((f) => f[1] === "/dev/shm")
      .pop();
    if (shm && shm[2] === "tmpfs" && !(shm[3] ?? "").split(",").includes("noexec")) return "/dev/shm";
  } catch {
    // no /proc: fall through
  }
  return workRoot();
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, "SIGKILL"); // UML forks a host process per guest address space
  } catch {
    // already gone
  }
}

const shq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

function initScript(opts: {
  nonce: string;
  workDir: string;
  modules: readonly string[];
  env: Record<string, string>;
}): string {
  const exports = Object.entries({ ...opts.env, PROXYSCOPE_WORKDIR: opts.workDir }).map(
    ([k, v]) => `export ${k}=${shq(v)}`,
  );
  const n = opts.nonce;
  return [
    "#!/bin/sh",
    `. ${shq(GUEST_LIB)}`,
    // A checkout under /tmp (CI clones anywhere) must stay visible: then the guest keeps the host's /tmp.
    `proxyscope_mount_basics${REPO_ROOT === "/tmp" || REPO_ROOT.startsWith("/tmp/") ? " keep-tmp" : ""}`,
    `echo "@@PROXYSCOPE-BOOTED ${n}@@"`,
    opts.modules.length > 0 ? `proxyscope_load_modules ${opts.modules.map(shq).join(" ")}` : ":",
    "ip link set lo up",
    ...exports,
    `cd ${shq(REPO_ROOT)}`,
    `echo "@@PROXYSCOPE-BEGIN ${n}@@"`,
    `/bin/sh ${shq(join(opts.workDir, "script.sh"))} </dev/null 2>&1`,
    "rc=$?",
    "sync",
    `echo "@@PROXYSCOPE-END ${n} rc=$rc@@"`,
    "poweroff -f || halt -f",
    "",
  ].join("\n");
}

/**
 * Boots UML once, runs `script` as its payload and returns what it printed and its exit status.
 * Throws UmlUnavailableError when UML is not installed, UmlBootError when the guest never reached
 * the script, died inside it, or ran past `timeoutMs` (its process group is killed first).
 */
export async function bootUml(opts: UmlOptions): Promise<UmlResult> {
  const kernel = opts.kernel ?? UML_KERNEL;
  const reason = umlUnavailableReason(kernel);
  if (reason !== null) throw new UmlUnavailableError(reason);
  for (const k of Object.keys(opts.env ?? {})) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) throw new Error(`bad environment name ${JSON.stringify(k)}`);
  }
  const memMb = opts.memMb ?? 512;
  const timeoutMs = opts.timeoutMs ?? 600_000;
  const nonce = randomBytes(6).toString("hex");
  const workDir = mkdtempSync(join(workRoot(), "proxyscope-uml-"));
  const umid = `proxyscope-${nonce}`;
  writeFileSync(join(workDir, "script.sh"), opts.script, { mode: 0o755 });
  writeFileSync(
    join(workDir, "init.sh"),
    initScript({ nonce, workDir, modules: opts.modules ?? DEFAULT_MODULES, env: opts.env ?? {} }),
    { mode: 0o755 },
  );
  const args = [
    `mem=${memMb}M`,
    "root=/dev/root",
    "rootfstype=hostfs",
    "rootflags=/",
    "rw",
    "quiet",
    `umid=${umid}`,
    `uml_dir=${workDir}`,
    `init=${join(workDir, "init.sh")}`,
    "con=null",
    "con0=fd:0,fd:1",
  ];
  const started = performance.now();
  const child = spawnOwned(kernel, args, {
    stdio: ["ignore", "pipe", "pipe"],
    // spawnOwned: its own process group (a timeout kills every process UML forked), listed for the
    // suite's exit hook, tagged with the suite's marker.
    env: umlHostEnv(workDir, memoryDir()),
  });
  const chunks: Buffer[] = [];
  child.stdout?.on("data", (b: Buffer) => chunks.push(b));
  child.stderr?.on("data", (b: Buffer) => chunks.push(b));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child);
  }, timeoutMs);
  const status = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>(
    (resolve) => {
      child.on("error", (error) => resolve({ code: null, signal: null, error }));
      child.on("close", (code, signal) => resolve({ code, signal }));
    },
  );
  clearTimeout(timer);
  killGroup(child); // stray helpers, if any
  const durationMs = performance.now() - started;
  const consoleText = Buffer.concat(chunks).toString("utf8").replace(/\r/g, "");
  try {
    if (status.error) {
      throw new UmlBootError(`${kernel} could not start: ${status.error.message}`, "", workDir);
    }
    const moddir = /@@PROXYSCOPE-MODDIR-MISSING (\S+)@@/.exec(consoleText);
    if (moddir) throw new UmlBootError(`the guest has no modules at ${moddir[1]}`, consoleText, workDir);
    if (timedOut) {
      throw new UmlBootError(
        `UML did not finish within ${timeoutMs} ms and was killed`,
        consoleText,
        workDir,
      );
    }
    if (!consoleText.includes(`@@PROXYSCOPE-BOOTED ${nonce}@@`)) {
      throw new UmlBootError(
        `UML exited (code ${status.code}, signal ${status.signal}) before running init`,
        consoleText,
        workDir,
      );
    }
    const begin = `@@PROXYSCOPE-BEGIN ${nonce}@@\n`;
    const endRe = new RegExp(`@@PROXYSCOPE-END ${nonce} rc=(\\d+)@@`);
    const b = consoleText.indexOf(begin);
    const e = endRe.exec(consoleText);
    if (b < 0 || !e) {
      throw new UmlBootError(
        `the guest stopped before the script finished (code ${status.code}, signal ${status.signal})`,
        consoleText,
        workDir,
      );
    }
    const modulesFailed = [...consoleText.matchAll(/@@PROXYSCOPE-MODFAIL (\S+)@@/g)].map((m) => m[1]!);
    return {
      exitCode: Number(e[1]),
      output: consoleText.slice(b + begin.length, e.index),
      console: consoleText,
      modulesFailed,
      durationMs,
      workDir,
    };
  } finally {
    if (!opts.keepWorkDir) rmSync(workDir, { recursive: true, force: true });
  }
}

function tail(text: string, lines: number): string {
  return text.split("\n").slice(-lines).join("\n");
}
