import type { DtcwtBackend } from '../../../gpu/backend.js';
import { MARK_PARTS, type MarkPartTimes, noMarkTime, openThreadClock } from '../../../gpu/thread-cpu.js';
import { type ChildWatcher, endedChildrenCpu, processCpu, watchChildren } from '../../media/process-cpu.js';

/**
 * Where an ingest's time went, for `drm ingest --json` and the ingest benchmarks. Stages run one
 * after another and are timed on the wall clock. Packaging runs its processes and threads at
 * once, so its parts are CPU seconds instead (docs/benchmarks.md, "Where a watermarked ingest's
 * time goes").
 */
export interface StagePart {
  part: string;
  cpuSeconds: number;
}

export interface IngestStage {
  stage: string;
  seconds: number;
  parts?: StagePart[];
}

/** Laps on the wall clock, each charged to the stage that just ended. */
export class StageTimes {
  readonly stages: IngestStage[] = [];
  private last = performance.now();

  /** when the last stage ended (performance.now()): where the next one's time starts */
  get lastLapAt(): number {
    return this.last;
  }

  lap(stage: string, parts?: StagePart[]): void {
    const now = performance.now();
    this.stages.push({ stage, seconds: round3((now - this.last) / 1000), ...(parts && { parts }) });
    this.last = now;
  }
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

const MARK_PART_NAMES: Record<keyof MarkPartTimes, string> = {
  reduce: 'mark-reduce',
  forward: 'mark-forward-dtcwt',
  modulate: 'mark-modulate',
  inverse: 'mark-inverse-dtcwt',
  write: 'mark-write-variants',
  handoff: 'mark-handoff',
};

/**
 * The CPU of one packaging, split by who spent it: the child processes that ended at each
 * `ended(part)` (the decoder, then the encoders), the mark's worker threads by part, drm's main
 * thread, and its other threads (garbage collection, file I/O). Linux only; elsewhere no parts.
 * Children's CPU and the whole process's are counted per process, so packaging that did not have
 * the process to itself (another ingest, a worker's analysis started or ended a child meanwhile)
 * reports no parts rather than parts that mix in others' work.
 */
export function startPackagingMeter() {
  const self: ChildWatcher = { shared: false };
  const clock = openThreadClock();
  let children = endedChildrenCpu();
  const start = { main: clock?.seconds() ?? 0, process: processCpu() };
  let marking: { backend: DtcwtBackend; before?: MarkPartTimes } | undefined;
  const parts: StagePart[] = [];
  const add = (part: string, cpuSeconds: number) => {
    if (cpuSeconds > 0.0005) parts.push({ part, cpuSeconds: round3(cpuSeconds) });
  };
  return {
    /** the backend that marks this item: its threads' time from here on is this item's */
    marksWith(backend: DtcwtBackend): void {
      marking = { backend, before: backend.markTimes?.() };
    },
    /** runs the packaging: the children it starts are its own */
    run<T>(work: () => Promise<T>): Promise<T> {
      return watchChildren(self, work);
    },
    /** the children that have ended since the last call were doing `part` */
    ended(part: string): void {
      const now = endedChildrenCpu();
      if (now !== undefined && children !== undefined) add(part, now - children);
      children = now;
    },
    /** the parts, or undefined where they cannot be told apart */
    finish(): StagePart[] | undefined {
      const main = clock ? clock.seconds() - start.main : undefined;
      clock?.close();
      if (self.shared || main === undefined || children === undefined) return undefined;
      const mark = markSpent(marking?.before, marking?.backend.markTimes?.());
      for (const part of MARK_PARTS) add(MARK_PART_NAMES[part], mark[part]);
      add('main-thread', main);
      const markTotal = MARK_PARTS.reduce((sum, part) => sum + mark[part], 0);
      add('other-threads', processCpu() - start.process - main - markTotal);
      return parts;
    },
  };
}

function markSpent(before: MarkPartTimes | undefined, after: MarkPartTimes | undefined): MarkPartTimes {
  const spent = noMarkTime();
  if (after) for (const part of MARK_PARTS) spent[part] = after[part] - (before?.[part] ?? 0);
  return spent;
}

export type PackagingMeter = ReturnType<typeof startPackagingMeter>;
