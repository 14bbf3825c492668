/**
 * CPU time of processes from /proc (Linux), for the Scans benchmark: what
 * a process used itself, and what its children used once they were reaped
 * (cutime/cstime). Clock ticks of 10 ms (CLK_TCK 100), so only totals over
 * a run are meaningful. Elsewhere than Linux every figure is undefined.
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICK_MS = 10;

export interface CpuTimes {
  /** user + system of the process itself, ms */
  selfMs: number;
  /** user + system of its children that exited and were waited for, ms */
  childrenMs: number;
}

/** The times of `pid`, or undefined when it is gone (or there is no /proc). */
export function cpuTimesOf(pid: number): CpuTimes | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces), from field 3 (state) on.
    const fields = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    const [utime, stime, cutime, cstime] = [fields[11]!, fields[12]!, fields[13]!, fields[14]!];
    return { selfMs: (utime + stime) * TICK_MS, childrenMs: (cutime + cstime) * TICK_MS };
  } catch {
    return undefined;
  }
}

/** Child processes of `parent` whose command line contains `needle`. */
export function childrenMatching(parent: number, needle: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  return entries.map(Number).filter((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      return ppid === parent && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle);
    } catch {
      return false;
    }
  });
}

export function difference(after: CpuTimes | undefined, before: CpuTimes | undefined): CpuTimes | undefined {
  if (after === undefined || before === undefined) return undefined;
  return { selfMs: after.selfMs - before.selfMs, childrenMs: after.childrenMs - before.childrenMs };
}
