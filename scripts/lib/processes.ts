// The processes of a stack started from one root process, read from /proc:
// what each costs in CPU time and memory. CPU *time* is what counts on a
// shared machine: the wall-clock load of others' work does not enter it.
import { readFileSync, readdirSync } from "node:fs";

export interface ProcSample {
  pid: number;
  name: string;
  /** utime + stime, in clock ticks. */
  cpuTicks: number;
  rssMiB: number;
}

/** USER_HZ on Linux: /proc/<pid>/stat counts CPU in 1/100 s. */
export const TICK_HZ = 100;

/** The root and every process below it. */
export function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // exited while we looked
    }
  }
  const found = [root];
  for (let i = 0; i < found.length; i++)
    for (const [pid, ppid] of parent) if (ppid === found[i] && !found.includes(pid)) found.push(pid);
  return found;
}

function nameOf(pid: number): string {
  const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
  if (cmd.includes("hardhat")) return "chain (hardhat node)";
  if (cmd.includes("ponder")) return "indexer (ponder)";
  if (cmd.includes("api/src/index.ts")) return "api";
  if (cmd.includes("scripts/dev.ts")) return "npm start (dev.ts)";
  return cmd.slice(0, 40);
}

export function sampleProcesses(root: number): ProcSample[] {
  const samples: ProcSample[] = [];
  for (const pid of descendants(root)) {
    try {
      const raw = readFileSync(`/proc/${pid}/stat`, "utf8");
      const stat = raw.slice(raw.lastIndexOf(")") + 2).split(" ");
      const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      // utime and stime are fields 14 and 15 of stat (all threads); the slice starts at field 3.
      samples.push({
        pid,
        name: nameOf(pid),
        cpuTicks: Number(stat[11]) + Number(stat[12]),
        rssMiB: rss ? Math.round(Number(rss[1]) / 1024) : 0,
      });
    } catch {
      // exited while we looked
    }
  }
  // Only node processes do work here (npm and sh wrappers sleep): keep those with memory.
  return samples.filter((s) => s.rssMiB > 20);
}

/** Cores each process used between two samples `seconds` apart, by name, and their total. */
export function cpuCores(from: ProcSample[], to: ProcSample[], seconds: number): Record<string, number> {
  const cores: Record<string, number> = {};
  for (const end of to) {
    const start = from.find((s) => s.pid === end.pid);
    if (!start) continue;
    const used = (end.cpuTicks - start.cpuTicks) / TICK_HZ / seconds;
    cores[end.name] = Math.round(((cores[end.name] ?? 0) + used) * 1000) / 1000;
  }
  cores.total = Math.round(Object.values(cores).reduce((a, b) => a + b, 0) * 1000) / 1000;
  return cores;
}
