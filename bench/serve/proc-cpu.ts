import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

// A process's own CPU time (user + system, all its threads) from /proc/<pid>/stat, so that a
// bench can charge each server only for what it spent itself, not for the load generator or the
// store beside it on the same cores. Linux only.

let ticks: number | undefined;
/** clock ticks a second (USER_HZ), in which /proc counts CPU time */
function ticksPerSecond(): number {
  ticks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  return ticks;
}

/** Fields of /proc/<pid>/stat after the command name (which may hold spaces): [state, ppid, …]. */
function statFields(pid: number): string[] | undefined {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined; // gone, or not a process
  }
}

/** utime + stime of one process, in seconds (0 when it is gone). */
function ownSeconds(pid: number): number {
  const f = statFields(pid);
  // After the name: state(0) ppid(1) … utime(11) stime(12), i.e. fields 14 and 15 of proc(5).
  return f ? (Number(f[11]) + Number(f[12])) / ticksPerSecond() : 0;
}

/** The pids whose parent is `pid` (nginx's workers under its master). */
function childrenOf(pid: number): number[] {
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((p) => statFields(p)?.[1] === String(pid));
}

/**
 * CPU seconds spent so far by the process and, with `children`, by its live child processes (a
 * master and its workers). Take it before and after a run: the difference is the run's cost.
 */
export function cpuSeconds(pid: number, children = false): number {
  return ownSeconds(pid) + (children ? childrenOf(pid).reduce((s, p) => s + ownSeconds(p), 0) : 0);
}

/** CPU seconds the whole machine has been busy (all cores, everything but idle and iowait), from /proc/stat. */
export function machineBusySeconds(): number {
  const [, ...fields] = (fs.readFileSync('/proc/stat', 'utf8').split('\n')[0] as string).trim().split(/\s+/);
  const n = fields.map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already in user and nice)
  const busy = n.slice(0, 8).reduce((s, x) => s + x, 0) - (n[3] ?? 0) - (n[4] ?? 0);
  return busy / ticksPerSecond();
}
