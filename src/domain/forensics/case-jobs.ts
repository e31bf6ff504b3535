import type { DtcwtBackend } from '../../../gpu/backend.js';
import type { Context } from '../../context.js';
import type { CaseRow } from '../../db/repos/index.js';
import { DrmError } from '../../errors.js';
import { errorFields } from '../../log.js';
import type { LeasedJobs } from '../jobs/leased-jobs.js';
import { progressWriter } from '../operations/job-progress.js';
import { type AnalysisHooks, analyzeLeak } from './analyze.js';
import { completedOutcome, failedOutcome } from './cases.js';
import type { ForensicReport } from './report.js';

/** One leased analysis: the case, where its lease stands, what hears its stages. */
export type AnalyseCase = (
  row: CaseRow,
  signal: AbortSignal,
  onProgress?: AnalysisHooks['onProgress'],
) => Promise<ForensicReport>;

/**
 * The forensic_cases table as the job runner drives it: a case is waiting while `processing`,
 * its outcome is stored with the lease, and with --keep-leaks 0 its leak goes as soon as it ended.
 */
export function caseJobs(ctx: Context, backend: () => Promise<DtcwtBackend>) {
  const repo = ctx.repos.forensicCases;
  const analyse: AnalyseCase = async (row, signal, onProgress) => {
    if (!row.uploadPath) throw new DrmError('INTERNAL_ERROR', 'the uploaded leak is no longer kept');
    const content = await ctx.repos.content.find(row.contentId);
    if (!content) throw new DrmError('NOT_FOUND', `content ${row.contentId} no longer exists`);
    const reported = progressWriter(ctx, (p) => repo.setProgress(row.id, p), onProgress);
    const leak = await ctx.storage.spool.fetch(row.uploadPath, signal);
    return analyzeLeak(ctx, leak.path, content, { backend, signal, onProgress: reported }).finally(() =>
      leak.release(),
    );
  };
  const jobs: LeasedJobs<CaseRow, ForensicReport> = {
    noun: 'forensic case',
    label: 'analysis',
    idField: 'caseId',
    id: (row) => row.id,
    attempts: (row) => row.attempts,
    claimNext: (holder, now, until) => repo.claimNext(now, until, holder),
    renew: async (row, holder, until) => ((await repo.extendLease(row.id, holder, until)) ? 'held' : 'lost'),
    release: (row, holder) => repo.release(row.id, holder),
    run: (row, signal) => analyse(row, signal),
    async succeed(row, holder, report) {
      const stored = await repo.finish(row.id, holder, completedOutcome(report, ctx.clock.now()));
      if (stored)
        ctx.log.info('forensic case completed', {
          caseId: row.id,
          classification: report.classification,
          seconds: report.seconds,
        });
      return stored;
    },
    fail: (row, holder, reason) => repo.finish(row.id, holder, failedOutcome(reason, ctx.clock.now())),
    async ended(row) {
      if (!row.uploadPath || ctx.config.keepLeaksMs !== 0) return;
      await ctx.storage.spool
        .remove(row.uploadPath)
        .catch((err) => ctx.log.warn('could not remove a leak', errorFields(err)));
      await repo.dropUpload(row.id);
    },
  };
  return { jobs, analyse };
}
