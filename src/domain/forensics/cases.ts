import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import type { Context } from '../../context.js';
import type { CaseOutcome, CaseRow } from '../../db/repos/index.js';
import { notFound } from '../../errors.js';
import type { KeyAuth } from '../auth.js';
import { checkAnalysis } from './analyze.js';
import type { LeakRecord } from './leak-record.js';
import { type ForensicReport, normalizedReport } from './report.js';

/** Where leaks are received before their case keeps them in the store's spool (src/storage/spool.ts). */
export function uploadsDir(ctx: Context): string {
  const dir = ctx.storage.spool.localDir;
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

export interface LeakUpload {
  path: string;
  name: string;
  bytes: number;
}

/** What a case is a leak of, as asked. */
export interface LeakOf {
  contentId: string;
  contentType: string;
}

/**
 * Opens a case for a leak on disk: checks what was asked (content, license, type, media), keeps
 * the leak in the spool and queues the case as `processing`. The case owns the file from here on; the file of a request
 * that is
 * refused, or whose case cannot be stored, is removed. `auth` is null for the platform operator.
 */
export async function openCase(ctx: Context, auth: KeyAuth | null, upload: LeakUpload, of: LeakOf): Promise<CaseRow> {
  await checkLeak(ctx, auth, upload, of);
  return storeCase(ctx, auth, upload, of);
}

/** The checks of a leak before its analysis; the file of a refused one is removed. */
export async function checkLeak(ctx: Context, auth: KeyAuth | null, upload: LeakUpload, of: LeakOf): Promise<void> {
  try {
    await checkAnalysis(ctx, upload.path, { ...of, organizationId: auth?.org.id ?? null });
  } catch (err) {
    fs.rmSync(upload.path, { force: true });
    throw err;
  }
}

/**
 * Keeps the leak in the spool and stores its case: `processing` for a queue to take, or, with
 * `decided`, already ended (`drm analyze` on the data directory runs its analysis before), and
 * with --keep-leaks 0 then without its leak.
 */
export async function storeCase(
  ctx: Context,
  auth: KeyAuth | null,
  upload: LeakUpload,
  of: LeakOf,
  decided?: { outcome: CaseOutcome; openedAt: number },
): Promise<CaseRow> {
  if (decided && ctx.config.keepLeaksMs === 0) {
    fs.rmSync(upload.path, { force: true });
    return insertCase(ctx, auth, { ...upload, path: null }, of, decided);
  }
  // Kept where any worker can read it (on an object store, sent there) before the case is queued.
  const ref = await ctx.storage.spool.keep(upload.path, { move: true }).catch((err) => {
    fs.rmSync(upload.path, { force: true });
    throw err;
  });
  try {
    return await insertCase(ctx, auth, { ...upload, path: ref }, of, decided);
  } catch (err) {
    await ctx.storage.spool.remove(ref).catch(() => {});
    throw err;
  }
}

/** The outcome's fields of a case that waits for its analysis. */
const UNDECIDED: CaseOutcome = {
  status: 'processing',
  failureReason: null,
  classification: null,
  binaryId: null,
  supportedBits: null,
  matchedViewerId: null,
  matchedSessionId: null,
  report: null,
  leakFrames: null,
  completedAt: null,
};

async function insertCase(
  ctx: Context,
  auth: KeyAuth | null,
  upload: Omit<LeakUpload, 'path'> & { path: string | null },
  of: LeakOf,
  decided?: { outcome: CaseOutcome; openedAt: number },
): Promise<CaseRow> {
  const row: CaseRow = {
    id: randomUUID(),
    organizationId: auth?.org.id ?? null,
    apiKeyId: auth?.key.id ?? null,
    ...of,
    ...(decided?.outcome ?? UNDECIDED),
    uploadPath: upload.path,
    uploadName: upload.name.slice(0, 255),
    uploadBytes: upload.bytes,
    attempts: decided ? 1 : 0,
    leaseUntil: null,
    leasedBy: null,
    progress: null,
    createdAt: decided?.openedAt ?? ctx.clock.now(),
  };
  await ctx.repos.forensicCases.insert(row);
  if (decided) ctx.log.info('forensic case decided here', { caseId: row.id, status: row.status });
  else ctx.log.info('forensic case opened', { caseId: row.id, contentId: of.contentId, bytes: upload.bytes });
  return row;
}

export function completedOutcome(report: ForensicReport, now: number): CaseOutcome {
  return {
    status: 'completed',
    failureReason: null,
    classification: report.classification,
    binaryId: report.binaryId,
    supportedBits: report.supportedBits,
    matchedViewerId: report.evidence?.viewer.viewerId ?? null,
    matchedSessionId: report.evidence?.session.id ?? null,
    // The frame pairs (≈100 KB) go beside the report: lists of cases read every report, only the
    // evidence report reads them.
    ...withFramesApart(report),
    completedAt: now,
  };
}

export function failedOutcome(reason: string, now: number): CaseOutcome {
  return { ...UNDECIDED, status: 'failed', failureReason: reason, completedAt: now };
}

function withFramesApart(report: ForensicReport): Pick<CaseOutcome, 'report' | 'leakFrames'> {
  if (!report.leak) return { report: JSON.stringify(report), leakFrames: null };
  const { frames, ...facts } = report.leak;
  return { report: JSON.stringify({ ...report, leak: { ...facts, frames: [] } }), leakFrames: JSON.stringify(frames) };
}

/** A case's frame pairs as stored beside its report (undefined for cases that keep them inside it). */
export function storedFrames(row: CaseRow): LeakRecord['frames'] | undefined {
  return row.leakFrames ? (JSON.parse(row.leakFrames) as LeakRecord['frames']) : undefined;
}

export function reportOf(row: CaseRow): ForensicReport | null {
  return row.report ? normalizedReport(JSON.parse(row.report) as ForensicReport) : null;
}

/** The organization's own case; another organization's is as unknown as a missing one. */
export async function ownCase(ctx: Context, auth: KeyAuth, caseId: string): Promise<CaseRow> {
  const row = await ctx.repos.forensicCases.find(caseId);
  if (!row || row.organizationId !== auth.org.id) throw notFound(`forensic case ${caseId}`);
  return row;
}

/** The calling organization's cases, or (null: the platform operator) every case. */
export function listCases(ctx: Context, auth: KeyAuth | null, page: { limit: number; offset: number }) {
  return ctx.repos.forensicCases.list(auth?.org.id ?? null, page.limit, page.offset);
}

/** Any organization's case, for the platform operator. */
export async function anyCase(ctx: Context, caseId: string): Promise<CaseRow> {
  const row = await ctx.repos.forensicCases.find(caseId);
  if (!row) throw notFound(`forensic case ${caseId}`);
  return row;
}
