/**
 * CPU time of a server child from /proc (benchmarks only). Server CPU per request or per
 * document moves far less with the load of a shared machine than req/s or docs/s.
 */
import { readFileSync } from 'node:fs';

/** utime + stime in ms from a /proc stat file; NaN when unreadable (not Linux, process gone). */
function statCpuMs(file: string): number {
  try {
    const stat = readFileSync(file, 'utf8');
    // Fields 14 and 15 (utime, stime) in clock ticks, 100 per second on Linux; the command name
    // in brackets may hold spaces, so fields are counted after its closing bracket.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
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
