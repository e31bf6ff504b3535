import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { DtcwtBackend } from '../../../gpu/backend.js';
import type { Context } from '../../context.js';
import type { CaseRow } from '../../db/repos/index.js';
import { DrmError } from '../../errors.js';
import { LeasedJobRunner } from '../jobs/leased-job-runner.js';
import { sweepSpool } from '../operations/spool-sweep.js';
import type { AnalysisHooks } from './analyze.js';
import { type AnalyseCase, caseJobs } from './case-jobs.js';
import { RETENTION_PASS_MS, sweepExpiredLeaks } from './leak-retention.js';
import type { ForensicReport } from './report.js';

export interface ForensicsQueueOptions {
  /** the DTCWT backend's maker (default: the best one here, made on first use) */
  backend?: () => Promise<DtcwtBackend>;
  /** how long a taken case stays taken without news from its worker (default: the config's) */
  leaseMs?: number;
  pollMs?: number;
  /**
   * Whether this process analyses (default yes). `drm serve --no-analysis` queues cases and
   * waits for workers to decide them; a worker always analyses.
   */
  analyses?: boolean;
}

/**
 * Runs leak analyses from the forensic_cases table, at most `analysisConcurrency` at once in this
 * process (heavy work: one or two at a time keep the cores free for streaming). Cases are leased
 * in the database (src/domain/jobs/), so several servers share one queue, and a case whose
 * server died mid-analysis is taken again when its lease runs out: a restart loses nothing. A
 * stop lets running analyses finish: redoing minutes of decoding elsewhere would gain nothing.
 *
 * A synchronous request runs its own case at once (`run`), in the same slots; `start` adds the
 * background loop that `drm serve` uses for `?async=true` cases and for those a restart left.
 */
export class ForensicsQueue {
  private backend: Promise<DtcwtBackend> | undefined;
  private readonly makeBackend: () => Promise<DtcwtBackend>;
  private readonly runner: LeasedJobRunner<CaseRow, ForensicReport>;
  private readonly analyse: AnalyseCase;
  private retention: NodeJS.Timeout | undefined;
  private readonly analyses: boolean;

  constructor(
    private readonly ctx: Context,
    options: ForensicsQueueOptions = {},
  ) {
    this.makeBackend = options.backend ?? (() => ctx.dtcwt());
    this.analyses = options.analyses ?? true;
    const { jobs, analyse } = caseJobs(ctx, () => this.backendOnce());
    this.analyse = analyse;
    this.runner = new LeasedJobRunner(ctx, jobs, {
      holder: `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
      leaseMs: options.leaseMs ?? ctx.config.analysisLeaseMs,
      pollMs: options.pollMs,
      concurrency: ctx.config.analysisConcurrency,
      onStop: 'finish',
    });
  }

  /** The background loop: takes waiting cases whenever a slot is free. */
  start(): void {
    void sweepSpool(this.ctx);
    void sweepExpiredLeaks(this.ctx);
    this.retention = setInterval(() => void sweepExpiredLeaks(this.ctx), RETENTION_PASS_MS);
    this.retention.unref();
    if (this.analyses) this.runner.start();
  }

  /** Lets running analyses finish, then closes the backend. Waiting cases stay queued. */
  async stop(): Promise<void> {
    clearInterval(this.retention);
    await this.runner.stop();
    const backend = await this.backend?.catch(() => undefined);
    await backend?.close();
    this.backend = undefined;
  }

  /** The ids of the cases analysed here now. */
  get running(): string[] {
    return this.runner.runningIds;
  }

  /** Looks for waiting cases now (after an async case was queued). */
  wake(): void {
    this.runner.wake();
  }

  /**
   * Runs one case to its end in this process and returns it as stored. If another server took it
   * first, or this one leaves analyses to workers (--no-analysis), waits for it to be finished.
   * `signal` cancels the analysis: the case is stored as failed, "analysis cancelled", and
   * returned. `onProgress` hears the analysis's stages when it runs here.
   */
  async run(caseId: string, signal?: AbortSignal, onProgress?: AnalysisHooks['onProgress']): Promise<CaseRow> {
    const repo = this.ctx.repos.forensicCases;
    if (this.analyses)
      await this.runner.take((holder, now, until) => repo.claim(caseId, now, until, holder), {
        signal,
        run: (row, stop) => this.analyse(row, stop, onProgress),
      });
    else this.ctx.log.info('forensic case left to the workers', { caseId });
    for (;;) {
      const row = await repo.find(caseId);
      if (!row) throw new DrmError('NOT_FOUND', `forensic case ${caseId} not found`);
      if (row.status !== 'processing') return row;
      signal?.throwIfAborted();
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  /** Runs every waiting case (tests, and a process without the loop). */
  drain(): Promise<void> {
    return this.runner.drain();
  }

  private backendOnce(): Promise<DtcwtBackend> {
    this.backend ??= this.makeBackend();
    return this.backend;
  }
}
