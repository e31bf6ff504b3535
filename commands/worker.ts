import os from 'node:os';
import type { DtcwtBackend, DtcwtBackendKind } from '../gpu/index.js';
import type { ConfigInput } from '../src/config.js';
import type { Context } from '../src/context.js';
import { ForensicsQueue } from '../src/domain/forensics/queue.js';
import { badRequest } from '../src/errors.js';
import { IngestWorker } from '../src/domain/ingest/ingest-worker.js';
import type { DbOptions } from './options.js';
import type { Output } from './output.js';
import { withContext } from './with-context.js';

interface WorkerOptions extends DbOptions, ConfigInput {
  jobs?: string;
  backend?: DtcwtBackendKind;
}

type JobKind = 'ingest' | 'analysis';

function jobKinds(raw: string | undefined): Set<JobKind> {
  const kinds = (raw ?? 'ingest,analysis')
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
  for (const k of kinds)
    if (k !== 'ingest' && k !== 'analysis')
      throw badRequest(`--jobs takes ingest, analysis or both (ingest,analysis), got ${JSON.stringify(k)}`);
  if (kinds.length === 0) throw badRequest('--jobs must name ingest, analysis or both');
  return new Set(kinds as JobKind[]);
}

/**
 * `drm worker`: takes queued ingests and leak analyses from the database and runs them here, with
 * one DTCWT backend for both (the best this machine has: CUDA on an NVIDIA GPU, else the CPU
 * pool). Runs until SIGTERM or SIGINT: then it takes nothing more, gives a running ingest back to
 * the queue (another worker starts it again) and lets a running analysis finish.
 */
export function worker(opts: WorkerOptions): Promise<number> {
  return withContext({ logLevel: 'info', ...opts }, async (ctx, out) => {
    const kinds = jobKinds(opts.jobs);
    const backend = await ctx.dtcwt(opts.backend);
    const name = `${os.hostname()}:${process.pid}`;
    const ingest = kinds.has('ingest')
      ? new IngestWorker(ctx, { name, backend: async () => backend, leaseMs: ctx.config.analysisLeaseMs })
      : undefined;
    const forensics = kinds.has('analysis') ? new ForensicsQueue(ctx, { backend: async () => backend }) : undefined;
    ingest?.start();
    forensics?.start();
    sayReady(ctx, out, { name, kinds, backend });
    // The job loops' timers never hold a process open (a test's or a server's must end without them): the worker holds
    // itself until a signal.
    const alive = setInterval(() => {}, 3_600_000);
    const signal = await new Promise<string>((resolve) => {
      process.once('SIGTERM', () => resolve('SIGTERM'));
      process.once('SIGINT', () => resolve('SIGINT'));
    });
    ctx.log.info('worker stopping', { signal, ingest: ingest?.running ?? null });
    // Both at once: the forensics queue must not take a new case while the ingest is given back.
    const stopped = Promise.all([ingest?.stop(), forensics?.stop()]).then(() => backend.close());
    // The process stays up until the stop is done, and says so while it waits (an analysis may take
    // minutes to finish): a stop left waiting must show as a worker that names its work, not as
    // Node's exit 13, which is what a dry event loop under a pending await gives.
    const waiting = setInterval(() => {
      ctx.log.info('worker still stopping', {
        signal,
        ingest: ingest?.running ?? null,
        cases: forensics?.running ?? [],
      });
    }, 10_000);
    try {
      await stopped;
    } finally {
      clearInterval(waiting);
      clearInterval(alive);
    }
    ctx.log.info('worker stopped', { signal });
    return signal === 'SIGINT' ? 130 : 0;
  });
}

/** One line, like drm serve's, that a supervisor or a test reads to know the worker is taking jobs. */
function sayReady(ctx: Context, out: Output, w: { name: string; kinds: Set<JobKind>; backend: DtcwtBackend }): void {
  const jobs = [...w.kinds];
  const store = ctx.storage.backend.location;
  const database = ctx.db.dialect;
  const { name: backend, note } = w.backend;
  if (out.json)
    out.write(
      JSON.stringify({ worker: w.name, jobs, backend, ...(note ? { backendNote: note } : {}), db: database, store }),
    );
  else
    out.write(
      `drm worker ${w.name} taking ${jobs.join(' and ')} jobs (database ${database}, ` +
        `content ${store}, DTCWT backend ${backend}${note ? `; ${note}` : ''})`,
    );
}
