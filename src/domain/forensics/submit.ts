import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { DtcwtBackend } from '../../../gpu/backend.js';
import type { Context } from '../../context.js';
import type { CaseOutcome, CaseRow, ContentRow } from '../../db/repos/index.js';
import { jobFailureReason, notFound } from '../../errors.js';
import { errorFields } from '../../log.js';
import type { KeyAuth } from '../auth.js';
import { type AnalysisHooks, analyzeLeak } from './analyze.js';
import {
  checkLeak,
  completedOutcome,
  failedOutcome,
  type LeakUpload,
  openCase,
  storeCase,
  uploadsDir,
} from './cases.js';
import type { ForensicsQueue } from './queue.js';

/** A leak waiting in the uploads directory, and what it is said to be a leak of. */
export interface LeakSubmission {
  upload: LeakUpload;
  contentId: string;
  contentType: string;
}

export interface SubmitOptions {
  /** leave the case to the queue's background loop and return it as opened (the API's ?async=true) */
  queued?: boolean;
  signal?: AbortSignal;
  onProgress?: AnalysisHooks['onProgress'];
}

/**
 * How a leak uploaded to the API is analysed: its case is opened (the checks, then
 * `processing`; the case owns the file from here on) and run to its end in `queue`, or left to
 * the queue's loop. Returns the case as stored.
 */
export async function submitLeak(
  ctx: Context,
  queue: ForensicsQueue,
  auth: KeyAuth | null,
  leak: LeakSubmission,
  options: SubmitOptions = {},
): Promise<CaseRow> {
  const row = await openCase(ctx, auth, leak.upload, { contentId: leak.contentId, contentType: leak.contentType });
  if (options.queued) {
    queue.wake();
    return row;
  }
  return queue.run(row.id, options.signal, options.onProgress);
}

export interface LocalAnalysisOptions extends AnalysisHooks {
  /** the DTCWT backend's maker; what it makes is closed once the analysis ended */
  backend: () => Promise<DtcwtBackend>;
}

/**
 * `drm analyze` on a data directory, as the platform operator: the leak is copied into the uploads
 * directory (the user's own file is never taken), its type is the content's unless named, and it
 * is analysed here and now, with no lease and no queue: only its decided case is stored, with
 * the copy kept for the retention (--keep-leaks). A process killed mid-analysis leaves no case
 * for a server to finish later, only a copy that the spool's sweep removes.
 */
export async function analyzeLocalLeak(
  ctx: Context,
  file: string,
  request: { contentId: string; contentType?: string },
  options: LocalAnalysisOptions,
): Promise<CaseRow> {
  const content = await ctx.repos.content.find(request.contentId);
  if (!content) throw notFound(`content ${request.contentId}`);
  const upload = path.join(uploadsDir(ctx), `${randomUUID()}.upload`);
  fs.copyFileSync(file, upload);
  const leak: LeakUpload = { path: upload, name: path.basename(file), bytes: fs.statSync(upload).size };
  const of = { contentId: content.id, contentType: request.contentType ?? content.type };
  await checkLeak(ctx, null, leak, of);
  const openedAt = ctx.clock.now();
  let backend: Promise<DtcwtBackend> | undefined;
  try {
    const outcome = await decideHere(ctx, upload, content, {
      ...options,
      backend: () => (backend ??= options.backend()),
    });
    return await storeCase(ctx, null, leak, of, { outcome, openedAt });
  } catch (err) {
    fs.rmSync(upload, { force: true });
    throw err;
  } finally {
    await (await backend?.catch(() => undefined))?.close();
  }
}

/** The analysis's outcome: its finding, or why it failed (cancelled by the signal, or refused). */
async function decideHere(ctx: Context, leak: string, content: ContentRow, hooks: AnalysisHooks): Promise<CaseOutcome> {
  try {
    return completedOutcome(await analyzeLeak(ctx, leak, content, hooks), ctx.clock.now());
  } catch (err) {
    if (hooks.signal?.aborted) return failedOutcome('analysis cancelled', ctx.clock.now());
    ctx.log.error('forensic case failed', errorFields(err));
    return failedOutcome(jobFailureReason(err, 'analysis'), ctx.clock.now());
  }
}
