import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Context } from '../../context.js';
import type { IngestJobRow } from '../../db/repos/index.js';
import { notFound } from '../../errors.js';
import { probeMedia } from '../../media/probe.js';
import { checkSourceIntact } from '../../media/source-check.js';
import type { PutOptions } from '../../storage/s3-upload.js';
import { checkMedia, checkRequest, type IngestRequest, type IngestResult } from './ingest.js';

/** What a queued job keeps of its request: everything but the input, which is in the spool. */
export type QueuedRequest = Omit<IngestRequest, 'input'>;

export interface JobProgress {
  stage: string;
  done: number;
  total: number;
}

/** How far a stage is, 0 to 100 (null before its total is known). */
export function percentDone(p: JobProgress | null): number | null {
  return p && p.total > 0 ? Math.min(100, Math.round((p.done / p.total) * 100)) : null;
}

/** A job as `drm ingest --wait`, `drm jobs` and the live view show it. */
export interface IngestJobView {
  id: string;
  status: IngestJobRow['status'];
  title: string;
  type: string;
  source: { name: string; bytes: number };
  attempts: number;
  worker: string | null;
  progress: JobProgress | null;
  contentId: string | null;
  result: IngestResult | null;
  failureReason: string | null;
  createdAt: number;
  finishedAt: number | null;
}

export function jobView(row: IngestJobRow): IngestJobView {
  const request = JSON.parse(row.request) as QueuedRequest;
  return {
    id: row.id,
    status: row.status,
    title: request.title,
    type: request.type,
    source: { name: row.sourceName, bytes: row.sourceBytes },
    attempts: row.attempts,
    worker: row.worker,
    progress: row.progress ? (JSON.parse(row.progress) as JobProgress) : null,
    contentId: row.contentId,
    result: row.result ? (JSON.parse(row.result) as IngestResult) : null,
    failureReason: row.failureReason,
    createdAt: row.createdAt,
    finishedAt: row.finishedAt,
  };
}

/**
 * `drm ingest --queue`: checks the request and the source here (a bad file is refused now, not
 * by a worker later), sends the source to the store's spool and queues the job for a worker.
 * The user's file is copied, never taken. `sending` reports the bytes sent and stops the sending
 * (nothing is then left in the store, and nothing is queued).
 */
export async function queueIngest(ctx: Context, r: IngestRequest, sending: PutOptions = {}): Promise<IngestJobRow> {
  checkRequest(r);
  if (r.organizationId && !(await ctx.repos.organizations.find(r.organizationId)))
    throw notFound(`organization ${r.organizationId}`);
  const info = await probeMedia(ctx.media, r.input);
  checkMedia(r, info);
  // a cut file is refused here, before it is copied to the spool, as the worker would refuse it
  await checkSourceIntact(ctx.media, r.input, info);
  const { input, ...request } = r;
  const sourceBytes = fs.statSync(input).size;
  const ref = await ctx.storage.spool.keep(input, { ...sending, move: false });
  const row: IngestJobRow = {
    id: randomUUID(),
    status: 'queued',
    request: JSON.stringify({ ...request, title: request.title.trim() }),
    sourceRef: ref,
    sourceName: path.basename(input).slice(0, 255),
    sourceBytes,
    attempts: 0,
    leaseUntil: null,
    worker: null,
    progress: null,
    contentId: null,
    result: null,
    failureReason: null,
    createdAt: ctx.clock.now(),
    finishedAt: null,
  };
  try {
    await ctx.repos.ingestJobs.insert(row);
  } catch (err) {
    await ctx.storage.spool.remove(ref).catch(() => {});
    throw err;
  }
  ctx.log.info('ingest queued', { jobId: row.id, bytes: row.sourceBytes });
  return row;
}

export async function findJob(ctx: Context, id: string): Promise<IngestJobRow> {
  const row = await ctx.repos.ingestJobs.find(id);
  if (!row) throw notFound(`ingest job ${id}`);
  return row;
}

/**
 * Waits for a job to end, done, failed or cancelled (`drm ingest --queue --wait`), telling
 * `onProgress` what its worker writes; returns the job as it ended. The signal stops the
 * waiting, not the job.
 */
export async function waitForJob(
  ctx: Context,
  id: string,
  onProgress: (p: JobProgress, row: IngestJobRow) => void,
  signal?: AbortSignal,
  pollMs = 500,
): Promise<IngestJobRow> {
  let seen = '';
  for (;;) {
    const row = await findJob(ctx, id);
    if (row.progress && row.progress !== seen) {
      seen = row.progress;
      onProgress(JSON.parse(row.progress) as JobProgress, row);
    }
    if (row.status === 'done' || row.status === 'failed' || row.status === 'cancelled') return row;
    signal?.throwIfAborted();
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
