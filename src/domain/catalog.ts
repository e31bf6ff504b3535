import type { Readable } from 'node:stream';
import type { Context } from '../context.js';
import type { CatalogRow, ContentRow, LicenseRow } from '../db/repos/index.js';
import { DrmError, notFound } from '../errors.js';
import type { KeyAuth } from './auth.js';
import { isUuid } from './validate.js';

/** GET /catalog: one page of ready content the organization holds a license for. */
export function listCatalog(
  ctx: Context,
  auth: KeyAuth,
  page: { limit: number; offset: number },
): Promise<CatalogRow[]> {
  return ctx.repos.content.listLicensed(auth.org.id, page);
}

/** One content item, if it exists and the organization is licensed to it. */
export async function getLicensedContent(ctx: Context, auth: KeyAuth, contentId: string): Promise<ContentRow> {
  return (await licensedContent(ctx, auth, contentId)).content;
}

/** The content item and the license that covers it for the organization (a specific one over `*`). */
export async function licensedContent(
  ctx: Context,
  auth: KeyAuth,
  contentId: string,
): Promise<{ content: ContentRow; license: LicenseRow }> {
  const item = isUuid(contentId) ? await ctx.repos.content.find(contentId) : undefined;
  if (item?.status !== 'ready') throw notFound('content');
  const license = await ctx.repos.licenses.findFor(auth.org.id, item.id, item.type);
  if (!license) throw new DrmError('LICENSE_REQUIRED', 'the organization has no active license for this content');
  return { content: item, license };
}

/** A file ingest published beside the segments (thumbnail, preview), or NOT_FOUND. */
export async function publishedFile(
  ctx: Context,
  contentId: string,
  name: string,
): Promise<{ body: Readable; bytes: number }> {
  const item = isUuid(contentId) ? await ctx.repos.content.find(contentId) : undefined;
  if (item?.status !== 'ready' || !item.storagePath) throw notFound('content');
  return ctx.storage.open(item.storagePath, name).catch((err) => {
    throw err instanceof DrmError && err.code === 'NOT_FOUND' ? notFound(name) : err;
  });
}
