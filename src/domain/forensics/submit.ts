import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { DtcwtBackend } from '../../../gpu/backend.js';
import type { Context } from '../../context.js';
import type { CaseRow } from '../../db/repos/index.js';
import { notFound } from '../../errors.js';
import type { KeyAuth } from '../auth.js';
import type { AnalysisHooks } from './analyze.js';
import { type LeakUpload, openCase, uploadsDir } from './cases.js';
import { ForensicsQueue } from './queue.js';

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
 * How every leak is analysed, uploaded to the API or named on `drm analyze`'s command line: its
 * case is opened (the checks, then `processing`; the case owns the file from here on) and run to
 * its end in `queue`, or left to the queue's loop. Returns the case as stored.
 */
export async function submitLeak(
  ctx: Context,
  queue: ForensicsQueue,
  auth: KeyAuth | null,
  leak: LeakSubmission,
  options: SubmitOptions = {},
): Promise<CaseRow> {
  const row = await openCase(ctx, auth, leak.upload, leak.contentId, leak.contentType);
  if (options.queued) {
    queue.wake();
    return row;
  }
  return queue.run(row.id, options.signal, options.onProgress);
}

export interface LocalAnalysisOptions extends SubmitOptions {
  /** the DTCWT backend's maker; the analysis's own queue closes what it makes */
  backend: () => Promise<DtcwtBackend>;
}

/**
 * `drm analyze` on a data directory, as the platform operator: the leak is copied into the uploads
 * directory (the case removes its copy when done, and the user's own file is never taken), its
 * type is the content's unless named, and its case runs in this process on a queue of its own.
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
  const leak: LeakSubmission = {
    upload: { path: upload, name: path.basename(file), bytes: fs.statSync(upload).size },
    contentId: content.id,
    contentType: request.contentType ?? content.type,
  };
  const queue = new ForensicsQueue(ctx, { backend: options.backend });
  try {
    return await submitLeak(ctx, queue, null, leak, options);
  } finally {
    await queue.stop();
  }
}
