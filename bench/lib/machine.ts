// The machine a benchmark ran on, recorded beside its figures.
import { spawnSync } from "node:child_process";
import { cpus, totalmem } from "node:os";

export function machine() {
  const cpu = cpus();
  const os = spawnSync("uname", ["-sr"], { encoding: "utf8" }).stdout.trim();
  return {
    date: new Date().toISOString(),
    nproc: cpu.length,
    cpuModel: cpu[0]?.model ?? "unknown",
    memoryGb: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    kernel: os,
    node: process.version,
  };
}
