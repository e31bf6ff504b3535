import type { Context } from '../src/context.js';
import type { IngestJobRow } from '../src/db/repos/index.js';
import type { IngestRequest, IngestResult } from '../src/domain/ingest/ingest.js';
import { findJob, jobView, queueIngest, waitForJob } from '../src/domain/ingest/ingest-queue.js';
import type { Output } from './output.js';
import { printJson } from './output.js';
import { createProgress } from './progress.js';

/** What each ingest stage counts (the packaging stages report seconds of the source). */
export const INGEST_UNITS: Record<string, string> = {
  packaging: 's of media',
  'marking A and B': 's of media',
  thumbnail: 'steps',
};

/**
 * `drm ingest --queue`: the source goes to the store's spool and a worker will ingest it. With
 * --wait, follows the job's progress as its worker writes it and ends as the ingest would have.
 */
export async function ingestQueued(ctx: Context, out: Output, request: IngestRequest, wait: boolean): Promise<number> {
  const row = await sendAndQueue(ctx, out, request);
  if (!row) return 130;
  if (!wait) {
    if (out.json) printJson(out, jobView(row));
    else out.write(`queued ingest job ${row.id} for a drm worker; follow it with: drm jobs show ${row.id} --wait`);
    return 0;
  }
  if (!out.json) out.error(`queued ingest job ${row.id}; waiting for a drm worker (Ctrl-C stops waiting, not the job)`);
  return followJob(ctx, out, row.id);
}

/**
 * Sends the source to the spool with the MB sent on the progress line, and queues its job. Ctrl-C
 * (or SIGTERM) stops the sending: an upload in parts is aborted, so nothing is left in the store
 * and nothing is queued (null).
 */
async function sendAndQueue(ctx: Context, out: Output, request: IngestRequest): Promise<IngestJobRow | null> {
  const progress = createProgress(!out.json && Boolean(process.stderr.isTTY));
  const stage = `sending ${request.input} to the store`;
  progress.stage(stage);
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const onBytes = (sent: number, total: number) =>
    progress.update(stage, Math.round(sent / 1e6), Math.round(total / 1e6), 'MB');
  try {
    return await queueIngest(ctx, request, { signal: controller.signal, onBytes });
  } catch (err) {
    if (!controller.signal.aborted) throw err;
    out.error('drm: stopped; nothing was queued and nothing is left in the store');
    return null;
  } finally {
    progress.stop();
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

/**
 * Waits for a job with a progress line, then prints how it ended: exit 0 done, 1 failed or cancelled, 130 when the wait
 * is interrupted.
 */
export async function followJob(ctx: Context, out: Output, id: string): Promise<number> {
  const progress = createProgress(!out.json && Boolean(process.stderr.isTTY));
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  let ended: IngestJobRow;
  try {
    ended = await waitForJob(
      ctx,
      id,
      (p) => progress.update(p.stage, Math.round(p.done), Math.round(p.total), INGEST_UNITS[p.stage]),
      controller.signal,
    );
  } catch (err) {
    progress.stop();
    if (!controller.signal.aborted) throw err;
    out.error(`drm: stopped waiting; job ${id} goes on (drm jobs show ${id} --wait)`);
    return 130;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
  if (ended.status === 'done') progress.finish('ingest done');
  else progress.stop();
  return printEnded(out, ended);
}

function printEnded(out: Output, row: IngestJobRow): number {
  const view = jobView(row);
  if (out.json) printJson(out, view);
  else if (view.status === 'failed') out.error(`drm: ingest job ${view.id} failed: ${view.failureReason}`);
  else if (view.status === 'cancelled') out.error(`drm: ingest job ${view.id} was cancelled`);
  else {
    out.write(ingestedLine(view.result as IngestResult, `by worker ${view.worker ?? '?'}`));
    const stages = stagesLine(view.result as IngestResult);
    if (stages) out.write(stages);
  }
  return view.status === 'done' ? 0 : 1;
}

export function ingestedLine(result: IngestResult, by?: string): string {
  const what = [
    result.type,
    result.resolution,
    result.isWatermarked ? 'watermarked (variants A and B)' : 'not watermarked',
  ]
    .filter(Boolean)
    .join(', ');
  return (
    `ingested "${result.title}" as ${result.contentId}: ${what}, ${result.duration} ` +
    `s in ${result.segmentCount} AES-128 segment(s) of ${result.segmentSeconds ?? 10} s, ` +
    `in ${result.seconds.toFixed(1)} s${by ? ` ${by}` : ''}`
  );
}

/** The wall time of each stage, on one line; --json also has the CPU of packaging's parts. */
export function stagesLine(result: IngestResult): string | undefined {
  // results stored before stages were reported have none
  const stages = (result.stages ?? []).filter((s) => s.seconds >= 0.05);
  if (stages.length === 0) return undefined;
  return `time by stage: ${stages.map((s) => `${s.stage} ${s.seconds.toFixed(1)} s`).join(', ')}`;
}

/** `drm jobs show ID [--wait]`. */
export async function showJob(ctx: Context, out: Output, id: string, wait: boolean): Promise<number> {
  if (wait) return followJob(ctx, out, id);
  const view = jobView(await findJob(ctx, id));
  if (out.json) printJson(out, view);
  else {
    const progress = view.progress
      ? `, ${view.progress.stage} ${Math.round(view.progress.done)}/${Math.round(view.progress.total)}`
      : '';
    out.write(
      `job ${view.id}: ${view.status}${progress}; "${view.title}" (${view.type}) ` +
        `from ${view.source.name}, ${view.attempts} ` +
        `attempt(s)${view.worker ? `, worker ${view.worker}` : ''}`,
    );
    if (view.contentId) out.write(`content ${view.contentId}`);
    if (view.failureReason) out.write(`failed: ${view.failureReason}`);
  }
  return 0;
}
