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
