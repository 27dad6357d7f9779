/**
 * CPU time of a server child from /proc (benchmarks only). Server CPU per request or per
 * document moves far less with the load of a shared machine than req/s or docs/s.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** utime + stime in ms of a /proc stat line. */
function cpuMsOf(stat: string): number {
  // Fields 14 and 15 (utime, stime) in clock ticks, 100 per second on Linux; the command name
  // in brackets may hold spaces, so fields are counted after its closing bracket.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
}

/** utime + stime in ms from a /proc stat file; NaN when unreadable (not Linux, process gone). */
function statCpuMs(file: string): number {
  try {
    return cpuMsOf(readFileSync(file, 'utf8'));
  } catch {
    return NaN;
  }
}

/** CPU a process has used so far, all threads, in ms. */
export function processCpuMs(pid: number | undefined): number {
  return statCpuMs(`/proc/${pid}/stat`);
}

/** CPU a process's main thread has used so far, in ms. */
export function mainThreadCpuMs(pid: number | undefined): number {
  return statCpuMs(`/proc/${pid}/task/${pid}/stat`);
}

/** CPU seconds per thread (tid → [name, seconds]) of a process; the main thread is named `main` (empty off Linux). */
export function threadCpu(pid: number | undefined): Map<string, [string, number]> {
  const out = new Map<string, [string, number]>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        out.set(tid, [String(tid) === String(pid) ? 'main' : name, cpuMsOf(stat) / 1000]);
      } catch {
        // The thread ended between the listing and the read.
      }
    }
  } catch {
    // Not Linux.
  }
  return out;
}
