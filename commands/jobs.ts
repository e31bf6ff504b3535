import { jobView, percentDone } from '../src/domain/ingest/ingest-queue.js';
import { cancelJob, retryJob, SOURCE_KEPT_MS } from '../src/domain/ingest/job-control.js';
import { showJob } from './ingest-queued.js';
import type { DbOptions } from './options.js';
import { printJson, printTable } from './output.js';
import { withContext } from './with-context.js';

/** `drm jobs list`: the most recent queued ingests and how each stands. */
export function listJobs(opts: DbOptions & { limit?: string }): Promise<number> {
  return withContext(opts, async (ctx, out) => {
    const limit = Math.min(Math.max(Number(opts.limit ?? 20) || 20, 1), 500);
    const views = (await ctx.repos.ingestJobs.list(limit)).map(jobView);
    if (out.json) printJson(out, { jobs: views });
    else if (views.length === 0) out.write('no ingest job has been queued (drm ingest --queue FILE …)');
    else {
      const progress = (v: (typeof views)[number]) =>
        v.progress && v.status === 'running' ? `${v.progress.stage} ${percentDone(v.progress) ?? 0}%` : '';
      printTable(
        out,
        ['job', 'status', 'title', 'source', 'worker', 'progress', 'content', 'queued'],
        views.map((v) => [
          v.id,
          v.status,
          v.title,
          v.source.name,
          v.worker,
          progress(v) || v.failureReason,
          v.contentId,
          new Date(v.createdAt).toISOString(),
        ]),
      );
    }
    return 0;
  });
}

/** `drm jobs show ID [--wait]`. */
export function showJobCommand(id: string, opts: DbOptions & { wait?: boolean }): Promise<number> {
  return withContext(opts, (ctx, out) => showJob(ctx, out, id, Boolean(opts.wait)));
}

/** `drm jobs cancel ID`: one line, or the job as it stands with --json. */
export function cancelJobCommand(id: string, opts: DbOptions): Promise<number> {
  return withContext(opts, async (ctx, out) => {
    const { row, wasRunning } = await cancelJob(ctx, id);
    const days = SOURCE_KEPT_MS / 86_400_000;
    const stops =
      `its worker ${row.worker} stops it ` +
      `within ${Math.ceil(ctx.config.analysisLeaseMs / 3000)} s and removes what it made`;
    if (out.json) printJson(out, jobView(row));
    else
      out.write(
        `cancelled ingest job ${row.id}${wasRunning ? `; ${stops}` : ''} (its source is ` +
          `kept ${days} days: drm jobs retry ${row.id} queues it again)`,
      );
    return 0;
  });
}

/** `drm jobs retry ID`: one line, or the job as queued again with --json. */
export function retryJobCommand(id: string, opts: DbOptions): Promise<number> {
  return withContext(opts, async (ctx, out) => {
    const row = await retryJob(ctx, id);
    if (out.json) printJson(out, jobView(row));
    else
      out.write(`queued ingest job ${row.id} again for a drm worker; follow it with: drm jobs show ${row.id} --wait`);
    return 0;
  });
}
