import type { Context } from '../../context.js';

/** How often a running job writes its progress within one stage (a new stage is written at once). */
const PROGRESS_EVERY_MS = 2000;

/**
 * A progress callback for a running job or case that writes `{stage, done, total}` through
 * `write` for whoever polls it (drm top, `drm ingest --wait`, `drm analyze --server`): on each
 * new stage, at the end of one, and every two seconds within one. The write is never awaited: a
 * lost progress line is not worth a failed job.
 */
export function progressWriter<Stage extends string>(
  ctx: Context,
  write: (progress: string) => Promise<void>,
  also?: (stage: Stage, done: number, total: number) => void,
) {
  let lastWrite = 0;
  let lastStage = '';
  return (stage: Stage, done: number, total: number): void => {
    also?.(stage, done, total);
    const now = ctx.clock.now();
    if (stage === lastStage && now - lastWrite < PROGRESS_EVERY_MS && done < total) return;
    lastStage = stage;
    lastWrite = now;
    void write(JSON.stringify({ stage, done, total })).catch(() => {});
  };
}
