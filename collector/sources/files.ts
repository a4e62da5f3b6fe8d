import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { readRegularFile, type FileFailure } from "../../common/regular-file.js";
import { MAX_ANSWER_BYTES, TOO_LARGE } from "../gather/answer-bounds.js";
import type { Judge } from "../gather/answer-judge.js";
import { failedObservation, observationFromDigest } from "../gather/observe.js";
import type { NodeObservation } from "../report/schema.js";

// `report --from-files`: node reports saved with `proxyscope-agent scan -o json` (gathered by ssh or
// Ansible), read instead of asking agents. A file is what an agent's answer is, so it gets the same
// bounds (gather/answer-bounds.ts) and the same heap-limited judge; a bad file is its own node's named
// failure, labelled by its path, and never ends the report.

/** Far above any fleet the collector is measured at (5,000 nodes); a wrong directory is named, not read. */
const MAX_SAVED_FILES = 20_000;

export type FileList = { ok: true; files: SavedReport[] } | { ok: false; error: string; usage: true };

const usage = (error: string): FileList => ({ ok: false, error, usage: true });

/** The files to read: each path as given, a directory's *.json files (not recursive), in order. */
export async function listSavedFiles(paths: readonly string[]): Promise<FileList> {
  if (paths.length === 0) return usage("--from-files needs at least one file or directory");
  const files: SavedReport[] = [];
  for (const p of paths) {
    let isDir: boolean;
    try {
      isDir = (await stat(p)).isDirectory();
    } catch (e) {
      // A path that is not there is a typo to correct, not a node that failed.
      return usage(`--from-files ${p}: ${(e as NodeJS.ErrnoException).code ?? "cannot stat"}`);
    }
    if (!isDir) files.push(savedFile(p));
    else {
      let names: string[];
      try {
        names = (await readdir(p)).filter((n) => n.endsWith(".json")).sort();
      } catch (e) {
        return usage(`--from-files ${p}: ${(e as NodeJS.ErrnoException).code ?? "cannot list"}`);
      }
      if (names.length === 0) return usage(`--from-files ${p}: no .json file in this directory`);
      files.push(...names.map((n) => savedFile(join(p, n))));
    }
    if (files.length > MAX_SAVED_FILES)
      return usage(`--from-files: more than ${MAX_SAVED_FILES} files (is this the right directory?)`);
  }
  return { ok: true, files };
}

/** A saved report: its label (a path) and how to read its text (a file, or the demo's shipped sample). */
interface SavedReport {
  label: string;
  read(): Promise<{ ok: true; text: string } | FileFailure>;
}

const savedFile = (path: string): SavedReport => ({
  label: path,
  read: () => readRegularFile(path, MAX_ANSWER_BYTES),
});

/** One saved report: read within the answer bounds, judged as an agent's /report is. */
async function readSavedReport(item: SavedReport, judge: Judge): Promise<NodeObservation> {
  const path = item.label;
  const r = await item.read();
  if (!r.ok)
    return failedObservation(
      path,
      path,
      r.reason === "too-big" ? "garbage" : "unreachable",
      `${path}: ${r.reason === "too-big" ? `${TOO_LARGE}: ` : "cannot read: "}${r.error}`,
    );
  const parsed = await judge.judge("report", r.text);
  if (!parsed.ok) return failedObservation(path, path, parsed.outcome, `${path}: ${parsed.reason}`);
  return observationFromDigest(parsed.digest, path, parsed.digest.node, parsed.unknown);
}

/**
 * Every file's observation, one row each: a node two files claim keeps the first (in the order read),
 * and the other file becomes a wrong-node row named by its path, so no file is silently dropped.
 */
export async function readSavedReports(
  files: readonly SavedReport[],
  judge: Judge,
  onProgress?: (done: number, total: number) => void,
): Promise<NodeObservation[]> {
  const out: NodeObservation[] = [];
  const firstFor = new Map<string, string>();
  for (const f of files) {
    const o = await readSavedReport(f, judge);
    onProgress?.(out.length + 1, files.length);
    if (o.outcome !== "ok") {
      out.push(o);
      continue;
    }
    const first = firstFor.get(o.node);
    if (first !== undefined)
      out.push(
        failedObservation(
          f.label,
          f.label,
          "wrong-node",
          `${f.label}: another file (${first}) is also node ${JSON.stringify(o.node)}; this one is not used`,
        ),
      );
    else {
      firstFor.set(o.node, f.label);
      out.push(o);
    }
  }
  return out;
}
