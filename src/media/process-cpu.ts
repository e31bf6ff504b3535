import { AsyncLocalStorage } from 'node:async_hooks';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';

/**
 * CPU seconds of this process's children that have ended (and that Node has waited for, which it
 * does as each exits), from Linux's /proc/self/stat; undefined elsewhere. A child still running
 * is not in it yet, so a reader takes it when the children it wants to count have ended.
 * The kernel reports these in clock ticks of 1/100 s (USER_HZ) on every Linux architecture Node runs on.
 */
export function endedChildrenCpu(): number | undefined {
  let stat: string;
  try {
    stat = fs.readFileSync('/proc/self/stat', 'latin1');
  } catch {
    return undefined;
  }
  // After the command name (which may hold spaces) in parentheses: state is field 3, cutime 16, cstime 17.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[13]) + Number(fields[14]);
  return Number.isFinite(ticks) ? ticks / 100 : undefined;
}

/** CPU seconds of every thread of this process so far (user and system). */
export function processCpu(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/**
 * Work that counts its children's CPU (endedChildrenCpu) and this process's, and learns when
 * anything else in the process started or ended a child meanwhile: its counts then hold others'
 * work too (another ingest, a worker's analysis).
 */
export interface ChildWatcher {
  shared: boolean;
}

const watching = new Set<ChildWatcher>();
const owner = new AsyncLocalStorage<ChildWatcher>();
/** children alive now, each with the watcher it started under (undefined: none) */
const live = new Map<ChildProcess, ChildWatcher | undefined>();

/**
 * Runs `work` with the children it starts counted as the watcher's own. Work that overlaps another
 * watcher's, or starts while someone else's child runs, shares the process: both are told.
 */
export async function watchChildren<T>(watcher: ChildWatcher, work: () => Promise<T>): Promise<T> {
  for (const other of watching) other.shared = true;
  if (watching.size > 0 || [...live.values()].some((w) => w !== watcher)) watcher.shared = true;
  watching.add(watcher);
  try {
    return await owner.run(watcher, work);
  } finally {
    watching.delete(watcher);
  }
}

/** Every media process is started through here (./spawn.ts, ./encode.ts), so that watchers see the others'. */
export function trackChild(child: ChildProcess): void {
  const mine = owner.getStore();
  const others = () => {
    for (const w of watching) if (w !== mine) w.shared = true;
  };
  others();
  live.set(child, mine);
  child.once('exit', () => {
    live.delete(child);
    others();
  });
}
