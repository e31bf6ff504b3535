import fs from 'node:fs';

/**
 * The CPU time of the calling thread, for reports of where the time of a long job went. Node 20
 * has no per-thread CPU clock (process.threadCpuUsage arrived in 23.9) and process.cpuUsage()
 * counts every thread, the mark's workers included. Linux's scheduler keeps each thread's own
 * time in /proc/thread-self/schedstat (nanoseconds, brought up to date at each scheduler tick and
 * switch, so a read may lag by a tick), which a kept-open descriptor rereads in about 1.5 µs. A
 * span of a few milliseconds may read as none or a whole tick; summed over many spans (a film's
 * frames) the figure is right, as a profiler's samples are. Elsewhere there is no such clock, and
 * callers report no CPU split.
 */
export interface ThreadClock {
  /** CPU seconds this thread has run since it started */
  seconds(): number;
  close(): void;
}

/** This thread's clock, or undefined where the platform has none. Open it on the thread it measures. */
export function openThreadClock(): ThreadClock | undefined {
  let fd: number;
  try {
    fd = fs.openSync('/proc/thread-self/schedstat', 'r');
  } catch {
    return undefined;
  }
  const buf = Buffer.alloc(96);
  const seconds = () => {
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    const space = buf.indexOf(32);
    return Number(buf.toString('latin1', 0, space > 0 && space < n ? space : n)) / 1e9;
  };
  try {
    if (!Number.isFinite(seconds())) throw new Error('unreadable');
  } catch {
    fs.closeSync(fd);
    return undefined;
  }
  return { seconds, close: () => fs.closeSync(fd) };
}

/** The parts of the video mark's per-frame job, in CPU seconds of the thread that ran them. */
export interface MarkPartTimes {
  /** the luma box-reduced to the mark's scale, and the cut check between frames */
  reduce: number;
  /** the forward DTCWT of the reduced luma */
  forward: number;
  /** the coefficients multiplied by the segment's gains, and δ held within its RMS range */
  modulate: number;
  /** the inverse DTCWT: δ at the reduced size */
  inverse: number;
  /** δ enlarged and added to and taken from the luma: the frames of A and B */
  write: number;
  /** the rest of the job on its thread: taking the frames in and handing them back */
  handoff: number;
}

export const MARK_PARTS = ['reduce', 'forward', 'modulate', 'inverse', 'write', 'handoff'] as const;

export function noMarkTime(): MarkPartTimes {
  return { reduce: 0, forward: 0, modulate: 0, inverse: 0, write: 0, handoff: 0 };
}

export function addMarkTimes(into: MarkPartTimes, add: MarkPartTimes): void {
  for (const part of MARK_PARTS) into[part] += add[part];
}
