import fs from 'node:fs';
import path from 'node:path';
import type { DtcwtBackend } from '../../../gpu/backend.js';
import type { Context } from '../../context.js';
import type { ContentRow } from '../../db/repos/index.js';
import { badRequest, DrmError, notFound } from '../../errors.js';
import { matchPackedCandidates } from './matching/matching.js';
import { CandidatePacker, type PackedCandidates } from './matching/packed-ids.js';
import { kindsIn, type MediaKind, watermarkEngine } from '../../watermark/engine.js';
import { allAId, type SegmentRule } from '../../watermark/segment-rule.js';
import { type Detection, underRule } from '../../watermark/segments.js';
import { contentRule } from '../content-rule.js';
import { isUuid } from '../validate.js';
import { recordLeak } from './leak-record.js';
import { evidenceFor, type ForensicReport, listedCandidates } from './report.js';

export type AnalysisStage = 'decode' | 'align' | 'score' | 'match';

export interface AnalysisHooks {
  /** the DTCWT backend for video (the caller owns it) */
  backend: () => Promise<DtcwtBackend>;
  onProgress?: (stage: AnalysisStage, done: number, total: number) => void;
  signal?: AbortSignal;
}

/**
 * What an analysis is asked about, checked before any work is queued: the content exists, the
 * asking organization (none for the platform operator) holds a license for it, it is of the named
 * type and was watermarked, and the leak is media holding a stream of that type.
 */
export async function checkAnalysis(
  ctx: Context,
  leak: string,
  request: { contentId: string; contentType: string; organizationId: string | null },
): Promise<ContentRow> {
  const { contentId, contentType, organizationId } = request;
  if (!contentId) throw badRequest('contentId is required: the id of the content the leak was taken from');
  if (contentType !== 'video' && contentType !== 'music')
    throw badRequest(`contentType must be video or music, got ${JSON.stringify(contentType)}`);
  const content = isUuid(contentId) ? await ctx.repos.content.find(contentId) : undefined;
  if (!content) throw notFound(`content ${contentId}`);
  // An organization traces leaks only of what it may stream: otherwise any key could learn, from a
  // leak of someone else's film, that film's viewers (docs/forensics.md, "Tenancy").
  if (organizationId !== null && !(await ctx.repos.licenses.findFor(organizationId, content.id, content.type))) {
    throw new DrmError('LICENSE_REQUIRED', `the organization has no active license for content ${contentId}`);
  }
  if (content.type !== contentType) throw badRequest(`content ${contentId} is ${content.type}, not ${contentType}`);
  if (!content.isWatermarked)
    throw badRequest(`content ${contentId} is not watermarked: a leak of it carries no mark to trace`);
  let kinds: MediaKind[];
  try {
    kinds = await kindsIn(ctx.media, leak);
  } catch {
    throw badRequest('the leak is not a video or audio file that ffmpeg can read');
  }
  if (!kinds.includes(contentType)) {
    throw badRequest(
      `the leak holds no ${contentType === 'video' ? 'video' : 'audio'} stream to ` +
        `compare with the ${contentType} content`,
    );
  }
  return content;
}

/** Content is music unless it is video (ingest stores no other type). */
const kindOf = (content: ContentRow): MediaKind => (content.type === 'video' ? 'video' : 'music');

/**
 * The reference ingest kept for detection (../../watermark/video/reference.ts,
 * ../../watermark/music/reference.ts), as a path ffmpeg reads (a local copy from an object store).
 */
async function referenceOf(ctx: Context, content: ContentRow): Promise<string> {
  const missing = () =>
    new DrmError(
      'CONFLICT',
      `content ${content.id} has no detection reference (it was ingested before drm ` +
        `kept one): ingest it again to analyse its leaks`,
    );
  if (!content.storagePath) throw missing();
  try {
    const file = await ctx.storage.localFile(content.storagePath, watermarkEngine(kindOf(content)).referenceFile);
    if (!fs.existsSync(file)) throw missing();
    return file;
  } catch (err) {
    throw err instanceof DrmError && err.code === 'NOT_FOUND' ? missing() : err;
  }
}

/** The candidate that stands for every session a license served unmarked (variant A throughout). */
const UNMARKED_SESSIONS = 'unmarked-sessions';
/** Candidates are read this many at a time: a page of rows is small, and they are kept packed. */
const CANDIDATES_PAGE = 50_000;

/**
 * Every viewer who streamed the content marked, and, when some sessions were served unmarked, one
 * more candidate whose id the content's rule serves as A throughout: without it, a copy of such a
 * session (A throughout) would point at whichever marked viewer has the most bits served as A. A
 * viewer who is served A wherever the leak is read ties with it, and a tie names nobody.
 */
export async function candidatesOf(
  ctx: Context,
  content: Pick<ContentRow, 'id' | 'segmentRule'>,
  pageSize = CANDIDATES_PAGE,
): Promise<PackedCandidates> {
  const packer = new CandidatePacker();
  if (await ctx.repos.forensicCases.hasUnmarkedSessions(content.id))
    packer.add({ viewerId: UNMARKED_SESSIONS, binaryId: allAId(contentRule(ctx, content)) });
  let last: string | null = null;
  for (;;) {
    const page = await ctx.repos.forensicCases.candidatesPage(content.id, last, pageSize);
    for (const row of page) {
      // a viewer's sessions come one after another, a page boundary between them or not
      if (row.viewerId !== last) {
        if (row.bits !== null) packer.addBits(row.viewerId, row.bits);
        else packer.add({ viewerId: row.viewerId, binaryId: row.binaryId as string });
      }
      last = row.viewerId;
    }
    if (page.length < pageSize) return packer.done();
  }
}

/** The leak's readings against the content's reference; a leak that does not line up reads nothing, and says why. */
async function detectIn(
  ctx: Context,
  leak: string,
  content: ContentRow,
  rule: SegmentRule,
  hooks: AnalysisHooks,
): Promise<Detection> {
  const original = await referenceOf(ctx, content);
  const job = { bins: ctx.media, key: ctx.keys.watermark, contentId: content.id, leak, original, rule };
  try {
    return await watermarkEngine(kindOf(content)).detect({
      ...job,
      reference: true,
      signal: hooks.signal,
      backend: hooks.backend,
      onProgress: hooks.onProgress,
    });
  } catch (err) {
    hooks.signal?.throwIfAborted();
    if (!(err instanceof DrmError) || err.code !== 'BAD_REQUEST') throw err;
    return {
      segments: [],
      bits: '?'.repeat(40),
      alignment: { unmatched: err.message.replace(leak, path.basename(leak)) },
    };
  }
}

/**
 * Reads the leak's marks against the content's reference and matches them against every viewer
 * who streamed the content. A leak that does not line up with the content at all (another film,
 * a different track) is a finding, not an error: no match, with the detector's reason.
 */
export async function analyzeLeak(
  ctx: Context,
  leak: string,
  content: ContentRow,
  hooks: AnalysisHooks,
): Promise<ForensicReport> {
  const started = performance.now();
  const rule = contentRule(ctx, content);
  const detection = await detectIn(ctx, leak, content, rule, hooks);
  hooks.onProgress?.('match', 0, 1);
  const candidates = await candidatesOf(ctx, content);
  const found = matchPackedCandidates(detection.segments, candidates, {
    mask: ctx.keys.viewerIds.mask,
    rule,
    strongBelow: ctx.config.strongBelow,
    standIns: [UNMARKED_SESSIONS],
    readingsTried: Number(detection.alignment.readingsTried ?? 1),
  });
  // A leak of an unmarked session carries variant A throughout: it is matched as such and names nobody.
  const unmarked = found.standIn === UNMARKED_SESSIONS;
  const match = unmarked ? { ...found, reason: 'the copy reads as the one served to sessions without a mark' } : found;
  const evidence = match.matched ? await evidenceFor(ctx, match.matched.viewerId, content) : null;
  const suspects = match.mixed && (await listedCandidates(ctx, match.mixed.suspects, UNMARKED_SESSIONS));
  // Named colluders carry their evidence as a named viewer does.
  const withEvidence =
    match.mixed?.named && suspects
      ? await Promise.all(suspects.map(async (s) => ({ ...s, evidence: await evidenceFor(ctx, s.viewerId, content) })))
      : suspects;
  const mixed = match.mixed && { ...match.mixed, suspects: withEvidence ?? [] };
  const leakRecord = await recordLeak(ctx, leak, content, detection, hooks.signal);
  hooks.onProgress?.('match', 1, 1);
  return {
    classification: match.classification,
    ...(unmarked && { matchesUnmarkedSessions: true }),
    binaryId: match.binaryId,
    readout: match.readout,
    supportedBits: match.supportedBits,
    markProbability: match.markProbability,
    identificationProbability: match.identificationProbability,
    strongBelow: match.strongBelow,
    decidedBits: match.decidedBits,
    fitting: match.fitting,
    candidateSet: await listedCandidates(ctx, match.candidateSet, UNMARKED_SESSIONS),
    segmentsToSeparate: match.segmentsToSeparate,
    segmentsToName: match.segmentsToName,
    mixed,
    reason: match.reason,
    candidates: match.candidates,
    score: match.score,
    contradictions: match.matched?.contradictions ?? 0,
    segmentRule: rule.kind,
    segmentSeconds: rule.segmentSeconds,
    detection: { segments: detection.segments.map((s) => underRule(s, rule)), alignment: detection.alignment },
    evidence,
    seconds: Math.round((performance.now() - started) / 100) / 10,
    leak: leakRecord,
  };
}
