import type { Context } from '../context.js';
import type { ContentRow } from '../db/repos/index.js';
import { DrmError, notFound } from '../errors.js';
import { isUuid } from './validate.js';

export interface ContentOverview {
  content: ContentRow;
  liveSessions: number;
  sessions: number;
  licenses: number;
  cases: number;
}

/** One item with what points at it (the operator's `drm content show`). */
export async function contentOverview(ctx: Context, id: string): Promise<ContentOverview> {
  const content = isUuid(id) ? await ctx.repos.content.find(id) : undefined;
  if (!content) throw notFound(`content ${id}`);
  return { content, ...(await ctx.repos.contentAdmin.references(content.id, ctx.clock.now())) };
}

export interface Deletion {
  id: string;
  /**
   * removed: the row is gone; tombstone: the row stays (status deleted, no files) for the sessions and cases that name
   * it
   */
  outcome: 'removed' | 'tombstone';
  endedSessions: number;
}

/**
 * Deletes an item: refused while sessions play it unless `force` (which ends them). The files are
 * set aside first, the rows change in one transaction (licenses gone, sessions ended, the row
 * removed or kept as a tombstone when sessions or cases name it: who streamed it is evidence), and
 * only then are the files removed; a failure puts them back.
 */
export async function deleteContent(ctx: Context, id: string, options: { force?: boolean } = {}): Promise<Deletion> {
  const { content, liveSessions, sessions, cases } = await contentOverview(ctx, id);
  if (content.status === 'deleted') throw notFound(`content ${id}`);
  if (liveSessions > 0 && !options.force) {
    throw new DrmError(
      'CONFLICT',
      `${liveSessions} session(s) are playing ${content.title}; delete with force to end them`,
    );
  }
  const files = content.storagePath ? ctx.storage.setAside(content.storagePath) : undefined;
  const keepRow = sessions > 0 || cases > 0;
  try {
    await ctx.db.transaction((tx) => tx.repos.contentAdmin.retire(content.id, keepRow));
  } catch (err) {
    files?.restore();
    throw err;
  }
  await files?.purge();
  ctx.log.info('content deleted', { contentId: content.id, tombstone: keepRow, endedSessions: liveSessions });
  return { id: content.id, outcome: keepRow ? 'tombstone' : 'removed', endedSessions: liveSessions };
}
