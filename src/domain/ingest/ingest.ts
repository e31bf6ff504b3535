import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { DtcwtBackend } from '../../../gpu/backend.js';
import type { Context } from '../../context.js';
import { seal } from '../../crypto/sealed.js';
import { DrmError } from '../../errors.js';
import { type HlsSegment, playlistIn, readPlaylist, writeKeyInfo } from '../../media/hls.js';
import { type MediaInfo, probeMedia, resolutionLabel } from '../../media/probe.js';
import { markVariantDiscontinuities } from '../../media/segment-discontinuity.js';
import { checkSourceIntact } from '../../media/source-check.js';
import type { Staging } from '../../storage/content-store.js';
import { watermarkEngine } from '../../watermark/engine.js';
import { musicPackaging } from './package-music.js';
import { type ContentType, checkMedia, checkRequest, type IngestRequest } from './ingest-checks.js';
import { videoPackaging } from './package-video.js';
import { type PackageJob, packageVariants } from './packaging.js';
import { makePreview, makeThumbnail } from './previews.js';
import {
  chargeWatermarkFee,
  refundAbandonedFee,
  refundWatermarkFee,
  type WatermarkCharge,
} from '../billing/watermark-fee.js';
import { newId } from '../../crypto/tokens.js';

/** Content ingested for an organization is licensed to it, marked as ingested. */
async function licenseForOrganization(
  tx: Context,
  organizationId: string,
  contentId: string,
  type: ContentType,
  watermark: boolean,
): Promise<void> {
  await tx.repos.licenses.upsert({
    id: newId(),
    organizationId,
    contentId,
    contentType: type,
    licenseScope: 'specific',
    watermarkingEnabled: watermark,
    pricePerStreamMicro: 0,
    isActive: true,
    createdAt: tx.clock.now(),
  });
}

export type { ContentType, IngestRequest } from './ingest-checks.js';

export interface IngestHooks {
  /** the DTCWT backend for watermarked video (the caller owns and closes it) */
  backend?: () => Promise<DtcwtBackend>;
  signal?: AbortSignal;
  onProgress?: (stage: string, done: number, total: number) => void;
}

export interface IngestResult {
  contentId: string;
  title: string;
  type: ContentType;
  /** seconds */
  duration: number;
  resolution: string | null;
  isWatermarked: boolean;
  segmentCount: number;
  /** the DTCWT backend that marked the video */
  backend: string | null;
  seconds: number;
  /** with an organization: what its balance paid for the mark (micro-APUSD), and whether a pass waived it */
  charge?: WatermarkCharge;
}

// The checks live beside ingest; callers (the queue, the CLI) still find them here.
export { checkMedia, checkRequest };

/** Variants A and B must cut at the same instants, or a viewer's sequence would jump. */
function segmentsOf(dir: string, watermarked: boolean): HlsSegment[] {
  if (!watermarked) return readPlaylist(playlistIn(path.join(dir, 'plain')));
  const a = readPlaylist(playlistIn(path.join(dir, 'a')));
  const b = readPlaylist(playlistIn(path.join(dir, 'b')));
  const same = a.length === b.length && a.every((s, i) => Math.abs(s.duration - (b[i] as HlsSegment).duration) < 1e-3);
  if (!same)
    throw new DrmError(
      'INTERNAL_ERROR',
      `variants A and B were cut differently (${a.length} and ${b.length} segments)`,
    );
  return a;
}

/**
 * Plain HLS, or variants A and B that the watermark engine marks; returns the DTCWT backend that
 * marked video, if one did.
 */
async function packageContent(
  ctx: Context,
  r: IngestRequest,
  job: PackageJob,
  contentId: string,
  hooks: IngestHooks,
): Promise<string | null> {
  const packaging = r.type === 'music' ? musicPackaging : videoPackaging;
  if (!r.watermark) {
    await packaging.plain(job);
    return null;
  }
  // Named after the work, not when made: a CUDA backend that turned to the CPU on a driver error
  // says so in its name, and the job's record then keeps it.
  let used: { name: string } | null = null;
  const make = hooks.backend;
  const backend =
    make &&
    (async () => {
      const b = await make();
      used = b;
      return b;
    });
  const request = {
    bins: job.bins,
    key: ctx.keys.watermark,
    contentId,
    input: r.input,
    referenceDir: job.dir,
    backend,
    signal: job.signal,
  };
  await packageVariants(job, await watermarkEngine(r.type).variants(request), packaging.markedArgs(job));
  return (used as { name: string } | null)?.name ?? null;
}

/**
 * Every segment's first packet of each PES stream marked as a discontinuity, so a session that
 * moves between A and B plays on without a continuity error (src/media/ts-discontinuity.ts).
 * Plain content never switches, but gets the same segments for uniformity: the pass is cheap.
 */
async function markSwitchPoints(
  ctx: Context,
  dir: string,
  watermarked: boolean,
  key: Buffer,
  signal?: AbortSignal,
): Promise<void> {
  const started = performance.now();
  const variants = watermarked ? ['a', 'b'] : ['plain'];
  const marks = await Promise.all(variants.map((v) => markVariantDiscontinuities(path.join(dir, v), key, signal)));
  const sum = (field: 'segments' | 'bytes' | 'inserted') => marks.reduce((n, m) => n + m[field], 0);
  ctx.log.debug('segments marked as discontinuities', {
    segments: sum('segments'),
    bytes: sum('bytes'),
    inserted: sum('inserted'),
    ms: Math.round(performance.now() - started),
  });
}

/** What ingests that died outright left behind goes, and a watermark fee one of them paid comes back. */
export async function sweepAbandonedIngests(ctx: Context): Promise<string[]> {
  return ctx.storage.sweep(
    async (id) => Boolean(await ctx.repos.content.find(id)),
    (id) => refundAbandonedFee(ctx, id),
  );
}

/**
 * `drm ingest`: probes the input (refusing one cut short or damaged), packages it as AES-128 HLS
 * (with variants A and B for --watermark), makes the thumbnail and preview, and publishes: the
 * files move into place in one rename and the catalog row follows. Any failure, or the signal, removes everything it
 * wrote.
 */
export async function ingestContent(ctx: Context, r: IngestRequest, hooks: IngestHooks = {}): Promise<IngestResult> {
  checkRequest(r);
  const info = await probeMedia(ctx.media, r.input);
  checkMedia(r, info);
  // Before the fee and the staging: a source cut short would otherwise be packaged, and paid for, as a shorter item.
  // One that pays the watermark fee (video for an organization) is decoded whole, so damage inside packets shows too.
  const paid = Boolean(r.organizationId && r.watermark && r.type === 'video');
  await checkSourceIntact(ctx.media, r.input, info, hooks.signal, paid);
  await sweepAbandonedIngests(ctx);
  const contentId = r.contentId ?? randomUUID();
  // Staged (its owner marked alive) before the fee is taken, so a kill at any point after it is swept and refunded.
  const staging = ctx.storage.stage(contentId);
  let charge: WatermarkCharge | undefined;
  try {
    if (r.organizationId) {
      charge = await chargeWatermarkFee(ctx, {
        organizationId: r.organizationId,
        contentId,
        type: r.type,
        watermark: r.watermark,
        frame: info.video ?? null,
      });
    }
    return { ...(await packageAndPublish(ctx, r, info, staging, hooks)), ...(charge && { charge }) };
  } catch (err) {
    // Refunded before the staging goes: if the refund fails, the next ingest's sweep gives it back.
    if (charge) await refundWatermarkFee(ctx, charge);
    await staging.discard();
    throw err;
  }
}

async function packageAndPublish(
  ctx: Context,
  r: IngestRequest,
  info: MediaInfo,
  staging: Staging,
  hooks: IngestHooks,
): Promise<IngestResult> {
  const started = performance.now();
  const bins = ctx.media;
  const contentId = staging.id;
  const perSecond = r.watermark && r.type === 'video' && info.video?.fps ? info.video.fps : 1;
  try {
    const key = randomBytes(16);
    const job: PackageJob = {
      bins,
      input: r.input,
      info,
      dir: staging.dir,
      keyInfo: writeKeyInfo(staging.dir, key),
      crf: r.crf ?? 18,
      preset: r.preset ?? 'fast',
      signal: hooks.signal,
      // the video marker counts frames; every stage is shown in seconds of media
      onProgress: (d, n) =>
        hooks.onProgress?.(r.watermark ? 'marking A and B' : 'packaging', d / perSecond, n / perSecond),
    };
    const backendName = await packageContent(ctx, r, job, contentId, hooks);
    await markSwitchPoints(ctx, staging.dir, r.watermark, key, hooks.signal);
    const segments = segmentsOf(staging.dir, r.watermark);
    hooks.onProgress?.('thumbnail and preview', 0, 1);
    await makeThumbnail(bins, r.input, info, staging.dir, hooks.signal);
    await makePreview(bins, r.input, info, staging.dir, hooks.signal);
    hooks.onProgress?.('thumbnail and preview', 1, 1);
    for (const f of ['segment.key', 'segment.keyinfo']) fs.rmSync(path.join(staging.dir, f));
    hooks.signal?.throwIfAborted();

    const duration = segments.reduce((s, x) => s + x.duration, 0) || info.duration;
    const resolution = r.type === 'video' && info.video ? resolutionLabel(info.video.width, info.video.height) : null;
    const storagePath = await staging.publish();
    await ctx.db.transaction(async (tx) => {
      await tx.repos.content.insert({
        id: contentId,
        title: r.title.trim(),
        description: r.description ?? null,
        type: r.type,
        duration: Math.round(duration * 1000),
        resolution,
        isWatermarked: r.watermark,
        segmentCount: segments.length,
        storagePath,
        contentKey: seal(ctx.keys.seal, key.toString('base64')),
        status: 'ready',
        createdAt: ctx.clock.now(),
      });
      if (r.organizationId) await licenseForOrganization(tx, r.organizationId, contentId, r.type, r.watermark);
    });
    staging.committed();
    ctx.log.info('content ingested', { contentId, type: r.type, watermarked: r.watermark, segments: segments.length });
    return {
      contentId,
      title: r.title.trim(),
      type: r.type,
      duration: Math.round(duration * 10) / 10,
      resolution,
      isWatermarked: r.watermark,
      segmentCount: segments.length,
      backend: backendName,
      seconds: (performance.now() - started) / 1000,
    };
  } catch (err) {
    // ingestContent discards the staging (after any refund); a cancelled ingest says it was cancelled
    hooks.signal?.throwIfAborted();
    throw err;
  }
}
