import { memoryLimitFiles, parseMemoryLimit } from "../parse/cgroup-memory.js";
import { readTextFile } from "../../common/regular-file.js";

interface MemoryLimit {
  /** The least limit of this process's cgroup and its ancestors; null: none set, or none readable. */
  bytes: number | null;
  /** The file it came from, or why there is none. */
  from: string;
}

/**
 * The container's memory limit as the kernel enforces it on this process (parse/cgroup-memory.ts).
 * `root` is "/" but for tests, which lay out recorded /proc and /sys files under a directory.
 */
export async function containerMemoryLimit(root = "/"): Promise<MemoryLimit> {
  const at = (p: string) => (root === "/" ? p : `${root.replace(/\/+$/, "")}${p}`);
  const [cgroup, mountinfo] = await Promise.all([
    readTextFile(at("/proc/self/cgroup")),
    readTextFile(at("/proc/self/mountinfo"), 4 * 1024 * 1024),
  ]);
  if (!cgroup.ok) return { bytes: null, from: `not read: ${cgroup.error.message}` };
  if (!mountinfo.ok) return { bytes: null, from: `not read: ${mountinfo.error.message}` };
  let least: MemoryLimit = { bytes: null, from: "no memory limit set on this process's cgroups" };
  // A file that exists but was not read or not understood may hold the limit: never "no limit".
  const unread: string[] = [];
  for (const f of memoryLimitFiles(cgroup.text, mountinfo.text)) {
    const read = await readTextFile(at(f.path), 4096);
    if (!read.ok) {
      // Missing: the root cgroup, or v2 without the memory controller there; neither limits anything.
      if (!read.missing) unread.push(`${f.path}: ${read.error.message}`);
      continue;
    }
    const limit = parseMemoryLimit(read.text, f.version);
    if (!limit.ok) unread.push(`${f.path}: ${limit.error}`);
    if (!limit.ok || limit.value === null) continue;
    if (least.bytes === null || limit.value < least.bytes) least = { bytes: limit.value, from: f.path };
  }
  if (unread.length === 0) return least;
  const why = `not read: ${unread.join("; ")}`;
  return { bytes: least.bytes, from: least.bytes === null ? why : `${least.from} (${why})` };
}
