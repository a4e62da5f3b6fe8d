import { excerpt, parsed, unparsable } from "./result.js";
import type { Result } from "../../common/result.js";

// Where this process's memory limit is written. cgroup v2: `memory.max` of the process's cgroup
// ("max": none); v1: `memory.limit_in_bytes` of its memory cgroup. Every ancestor below the mount can
// hold a tighter one (a pod's limit above its container's), so all of them are read and the least
// counts. The cgroup a process is in is /proc/self/cgroup's `ID:CONTROLLERS:PATH` (v2: `0::PATH`),
// and where that hierarchy is mounted is /proc/self/mountinfo's; inside a container the mount's root
// is the container's own cgroup (a cgroup namespace, or a bind mount of it), so PATH is taken relative
// to it. Formats: proc(5) (/proc/pid/cgroup, /proc/pid/mountinfo); the kernel's
// Documentation/admin-guide/cgroup-v2.rst (memory.max) and cgroup-v1/memory.rst (memory.limit_in_bytes).

interface LimitFile {
  /** Absolute path of a memory.max or memory.limit_in_bytes, own cgroup first, then each ancestor. */
  path: string;
  version: 1 | 2;
}

interface Mount {
  root: string;
  point: string;
  fstype: string;
  superOptions: string[];
}

// mountinfo escapes space, tab, newline and backslash in paths as \ooo.
const unescape = (s: string) =>
  s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));

function mounts(mountinfo: string): Mount[] {
  const out: Mount[] = [];
  for (const line of mountinfo.split("\n")) {
    const [pre, post] = line.split(" - ");
    if (pre === undefined || post === undefined) continue;
    const f = pre.split(" ");
    const [fstype, , superOptions] = post.split(" ");
    if (f.length < 5 || fstype === undefined) continue;
    out.push({
      root: unescape(f[3]!),
      point: unescape(f[4]!),
      fstype,
      superOptions: (superOptions ?? "").split(","),
    });
  }
  return out;
}

/** The files that may hold this process's memory limit; none when it is in no memory cgroup we can see. */
export function memoryLimitFiles(cgroup: string, mountinfo: string): LimitFile[] {
  const all = mounts(mountinfo);
  const files: LimitFile[] = [];
  for (const line of cgroup.split("\n")) {
    const m = /^(\d+):([^:]*):(\/.*)$/.exec(line.trim());
    if (!m) continue;
    const [, id, controllers, path] = m as unknown as [string, string, string, string];
    const v2 = id === "0" && controllers === "";
    if (!v2 && !controllers.split(",").includes("memory")) continue;
    const mount = all.find((x) =>
      v2 ? x.fstype === "cgroup2" : x.fstype === "cgroup" && x.superOptions.includes("memory"),
    );
    if (mount === undefined) continue;
    const name = v2 ? "memory.max" : "memory.limit_in_bytes";
    for (const dir of ancestors(mount, path)) files.push({ path: `${dir}/${name}`, version: v2 ? 2 : 1 });
  }
  return files;
}

/** The process's cgroup directory under the mount, then each parent up to the mount point. */
function ancestors(mount: Mount, path: string): string[] {
  const root = mount.root === "/" ? "" : mount.root.replace(/\/+$/, "");
  // A path outside the mount's root (a container that sees its host's path) is the mount point itself.
  const rel =
    root === "" ? path : path === root || path.startsWith(`${root}/`) ? path.slice(root.length) : "";
  const parts = rel.split("/").filter((p) => p !== "" && p !== "." && p !== "..");
  const point = mount.point.replace(/\/+$/, "");
  const dirs: string[] = [];
  for (let n = parts.length; n >= 0; n--) dirs.push([point, ...parts.slice(0, n)].join("/") || "/");
  return dirs;
}

// cgroup v1 writes "no limit" as the largest page-aligned counter (9223372036854771712 on 4 KiB pages).
const V1_UNLIMITED = 2 ** 62;

/** A limit file's text: bytes, or null for no limit ("max"; v1's huge counter). */
export function parseMemoryLimit(text: string, version: 1 | 2): Result<number | null> {
  const t = text.trim();
  if (version === 2 && t === "max") return parsed(null);
  if (!/^\d{1,20}$/.test(t)) return unparsable(`not a memory limit: ${excerpt(t)}`);
  const n = Number(t);
  return parsed(version === 1 && n >= V1_UNLIMITED ? null : n);
}
