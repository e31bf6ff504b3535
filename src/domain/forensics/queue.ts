import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { DtcwtBackend } from '../../../gpu/backend.js';
import type { Context } from '../../context.js';
import type { CaseOutcome, CaseRow } from '../../db/repos/index.js';
import { DrmError, jobFailureReason } from '../../errors.js';
import { errorFields } from '../../log.js';
import { progressWriter } from '../operations/job-progress.js';
import { sweepSpool } from '../operations/spool-sweep.js';
import { RETENTION_PASS_MS, sweepExpiredLeaks } from './leak-retention.js';
import { type AnalysisHooks, analyzeLeak } from './analyze.js';
import { completedOutcome, failedOutcome } from './cases.js';

export interface ForensicsQueueOptions {
  /** the DTCWT backend's maker (default: the best one here, made on first use) */
  backend?: () => Promise<DtcwtBackend>;
  /** how long a taken case stays taken without news from its worker (default: the config's) */
  leaseMs?: number;
  pollMs?: number;
  /**
   * Whether this process analyses (default yes). `drm serve --no-analysis` queues cases and
   * waits for workers to decide them; a local `drm analyze` and a worker always analyse.
   */
  analyses?: boolean;
}

/** A case that took its worker down this many times is failed rather than taken again. */
const MAX_ATTEMPTS = 3;

/**
 * Runs leak analyses from the forensic_cases table, at most `analysisConcurrency` at once in this
 * process (heavy work: one or two at a time keep the cores free for streaming). Cases are leased
 * in the database like webhook deliveries, so several servers share one queue, and a case whose
 * server died mid-analysis is taken again when its lease runs out: a restart loses nothing.
 *
 * A synchronous request runs its own case at once (`run`), in the same slots; `start` adds the
 * background loop that `drm serve` uses for `?async=true` cases and for those a restart left.
 */
export class ForensicsQueue {
  private backend: Promise<DtcwtBackend> | undefined;
  private readonly makeBackend: () => Promise<DtcwtBackend>;
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private active = 0;
  private readonly slotWaiters: Array<() => void> = [];
  private readonly running = new Set<Promise<unknown>>();
  private timer: NodeJS.Timeout | undefined;
  private retention: NodeJS.Timeout | undefined;
  private started = false;
  private stopping = false;
  /** the loop's turn under way, which stop() waits for (it may be claiming a case) */
  private filling: Promise<void> | undefined;
  private readonly analyses: boolean;
  /** who holds the leases this queue takes: only it may extend or end those cases */
  private readonly holder = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;

  constructor(
    private readonly ctx: Context,
    options: ForensicsQueueOptions = {},
  ) {
    this.makeBackend = options.backend ?? (() => ctx.dtcwt());
    this.leaseMs = options.leaseMs ?? ctx.config.analysisLeaseMs;
    this.pollMs = options.pollMs ?? 2000;
    this.analyses = options.analyses ?? true;
  }

  /** The background loop: takes waiting cases whenever a slot is free. */
  start(): void {
    void sweepSpool(this.ctx);
    void sweepExpiredLeaks(this.ctx);
    this.retention = setInterval(() => void sweepExpiredLeaks(this.ctx), RETENTION_PASS_MS);
    this.retention.unref();
    if (!this.analyses) return;
    this.started = true;
    this.wake();
  }

  /** Lets running analyses finish, then closes the backend. Waiting cases stay queued. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    clearInterval(this.retention);
    await this.filling;
    await Promise.allSettled([...this.running]);
    const backend = await this.backend?.catch(() => undefined);
    await backend?.close();
    this.backend = undefined;
  }

  /** Looks for waiting cases now (after an async case was queued). */
  wake(): void {
    if (!this.started || this.stopping) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.turn(), 0);
    this.timer.unref();
  }

  private turn(): void {
    this.filling = this.fill().finally(() => {
      this.filling = undefined;
    });
  }

  /**
   * Runs one case to its end in this process and returns it as stored. If another server took it
   * first, or this one leaves analyses to workers (--no-analysis), waits for it to be finished. `signal` cancels the analysis: the case is stored as
   * failed, "analysis cancelled", and returned. `onProgress` hears the analysis's stages when it
   * runs here.
   */
  async run(caseId: string, signal?: AbortSignal, onProgress?: AnalysisHooks['onProgress']): Promise<CaseRow> {
    if (this.analyses) await this.runHere(caseId, signal, onProgress);
    else this.ctx.log.info('forensic case left to the workers', { caseId });
    for (;;) {
      const row = await this.ctx.repos.forensicCases.find(caseId);
      if (!row) throw new DrmError('NOT_FOUND', `forensic case ${caseId} not found`);
      if (row.status !== 'processing') return row;
      signal?.throwIfAborted();
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  private async runHere(caseId: string, signal?: AbortSignal, onProgress?: AnalysisHooks['onProgress']): Promise<void> {
    await this.slot();
    try {
      const row = await this.ctx.repos.forensicCases.claim(
        caseId,
        this.ctx.clock.now(),
        this.ctx.clock.now() + this.leaseMs,
        this.holder,
      );
      if (row) await this.track(this.analyse(row, signal, onProgress));
    } finally {
      this.release();
    }
  }

  /** Runs every waiting case (tests, and `drm analyze` on a local data directory). */
  async drain(): Promise<void> {
    for (;;) {
      await this.slot();
      const now = this.ctx.clock.now();
      const row = await this.ctx.repos.forensicCases.claimNext(now, now + this.leaseMs, this.holder).catch((err) => {
        this.release();
        throw err;
      });
      if (!row) {
        this.release();
        return;
      }
      await this.track(this.analyse(row)).finally(() => this.release());
    }
  }

  private async fill(): Promise<void> {
    while (!this.stopping && this.active < this.ctx.config.analysisConcurrency) {
      this.active++;
      let row: CaseRow | undefined;
      try {
        const now = this.ctx.clock.now();
        row = await this.ctx.repos.forensicCases.claimNext(now, now + this.leaseMs, this.holder);
      } catch (err) {
        this.ctx.log.error('forensics queue failed', errorFields(err));
      }
      if (!row) {
        this.release();
        break;
      }
      void this.track(this.analyse(row)).finally(() => {
        this.release();
        this.wake();
      });
    }
    if (!this.stopping) {
      this.timer = setTimeout(() => this.turn(), this.pollMs);
      this.timer.unref();
    }
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.running.add(p);
    return p.finally(() => this.running.delete(p));
  }

  private async slot(): Promise<void> {
    if (this.active < this.ctx.config.analysisConcurrency) {
      this.active++;
      return;
    }
    await new Promise<void>((resolve) => this.slotWaiters.push(resolve));
  }

  private release(): void {
    const next = this.slotWaiters.shift();
    if (next) next();
    else this.active--;
  }

  /**
   * One analysis: its lease kept alive while it runs, its outcome stored, its upload removed. A
   * lease found lost (this process stalled past it and another took the case) stops the analysis
   * and leaves the case, and its leak, to the one that holds it now.
   */
  private async analyse(row: CaseRow, signal?: AbortSignal, onProgress?: AnalysisHooks['onProgress']): Promise<void> {
    const { ctx, holder } = this;
    const repo = ctx.repos.forensicCases;
    const lost = new AbortController();
    const keepLease = async () => {
      if (!(await repo.extendLease(row.id, holder, ctx.clock.now() + this.leaseMs).catch(() => true))) lost.abort();
    };
    const heartbeat = setInterval(() => void keepLease(), this.leaseMs / 3);
    heartbeat.unref();
    const end = (outcome: CaseOutcome) => repo.finish(row.id, holder, outcome).catch(() => false);
    let ended = false;
    try {
      if (row.attempts > MAX_ATTEMPTS)
        throw new DrmError('INTERNAL_ERROR', `the analysis stopped its server ${MAX_ATTEMPTS} times`);
      if (!row.uploadPath) throw new DrmError('INTERNAL_ERROR', 'the uploaded leak is no longer kept');
      const content = await ctx.repos.content.find(row.contentId);
      if (!content) throw new DrmError('NOT_FOUND', `content ${row.contentId} no longer exists`);
      const reported = progressWriter(ctx, (p) => repo.setProgress(row.id, p), onProgress);
      const stop = signal ? AbortSignal.any([signal, lost.signal]) : lost.signal;
      const leak = await ctx.storage.spool.fetch(row.uploadPath, stop);
      const report = await analyzeLeak(ctx, leak.path, content, {
        backend: () => this.backendOnce(),
        signal: stop,
        onProgress: reported,
      }).finally(() => leak.release());
      ended = await end(completedOutcome(report, ctx.clock.now()));
      if (ended)
        ctx.log.info('forensic case completed', {
          caseId: row.id,
          classification: report.classification,
          seconds: report.seconds,
        });
    } catch (err) {
      if (lost.signal.aborted) ended = false;
      else if (signal?.aborted) {
        ctx.log.info('forensic case cancelled', { caseId: row.id });
        ended = await end(failedOutcome('analysis cancelled', ctx.clock.now()));
      } else {
        ctx.log.error('forensic case failed', { caseId: row.id, ...errorFields(err) });
        ended = await end(failedOutcome(jobFailureReason(err, 'analysis'), ctx.clock.now()));
      }
    } finally {
      clearInterval(heartbeat);
    }
    if (!ended)
      ctx.log.warn('forensic case taken by another process after this one lost its lease; left to it', {
        caseId: row.id,
      });
    else if (row.uploadPath && ctx.config.keepLeaksMs === 0) await this.forget(row.id, row.uploadPath);
  }

  /** With --keep-leaks 0, a case's leak goes as soon as it ended. */
  private async forget(caseId: string, ref: string): Promise<void> {
    const { ctx } = this;
    await ctx.storage.spool.remove(ref).catch((err) => ctx.log.warn('could not remove a leak', errorFields(err)));
    await ctx.repos.forensicCases.dropUpload(caseId);
  }

  private backendOnce(): Promise<DtcwtBackend> {
    this.backend ??= this.makeBackend();
    return this.backend;
  }
}
