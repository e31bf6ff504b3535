import { iso } from '../../clock.js';
import type { Context } from '../../context.js';
import { type IngestJobView, jobView, percentDone } from '../ingest/ingest-queue.js';

/** Failures are counted over the last hour: long enough to see a pattern, short enough to clear once fixed. */
const FAILURES_WINDOW_MS = 3_600_000;

/** A running ingest as the live view lists it. */
export interface RunningIngest {
  jobId: string;
  title: string;
  type: string;
  /** host and pid of the worker holding its lease */
  worker: string | null;
  /** what the worker is doing, as it last wrote it; null until its first write */
  stage: string | null;
  percent: number | null;
  /** takes so far: more than 1 means a worker died on it (or was stopped) before */
  attempts: number;
  /** when it was queued: the table keeps no start time, and a lease says nothing of one */
  queuedAt: string;
}

/** The ingest queue of `drm ingest --queue` and `drm worker`, as GET /admin/overview reports it. */
export interface IngestQueue {
  /** queued, or running on a worker whose lease ran out (it died): the next worker takes them */
  waiting: number;
  running: number;
  jobs: RunningIngest[];
  failedLastHour: number;
  /** the newest failure of the last hour */
  lastFailure: { jobId: string; title: string; reason: string | null; at: string } | null;
}

export async function readIngestQueue(ctx: Context, now: number): Promise<IngestQueue> {
  const repo = ctx.repos.overview;
  const [counts, running, failures] = await Promise.all([
    repo.ingestCounts(now),
    repo.runningIngests(now),
    repo.ingestFailures(now - FAILURES_WINDOW_MS),
  ]);
  const latest = failures.latest ? jobView(failures.latest) : undefined;
  return {
    ...counts,
    jobs: running.map((row) => runningIngest(jobView(row))),
    failedLastHour: failures.count,
    lastFailure: latest
      ? {
          jobId: latest.id,
          title: latest.title,
          reason: latest.failureReason,
          at: iso(latest.finishedAt ?? latest.createdAt),
        }
      : null,
  };
}

function runningIngest(job: IngestJobView): RunningIngest {
  const p = job.progress;
  return {
    jobId: job.id,
    title: job.title,
    type: job.type,
    worker: job.worker,
    stage: p?.stage ?? null,
    percent: percentDone(p),
    attempts: job.attempts,
    queuedAt: iso(job.createdAt),
  };
}
