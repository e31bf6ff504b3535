import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { DtcwtBackend } from '../../../gpu/backend.js';
import type { Context } from '../../context.js';
import { seal } from '../../crypto/sealed.js';
import { writeKeyInfo } from '../../media/hls.js';
import { type MediaInfo, probeMedia, resolutionLabel } from '../../media/probe.js';
import { checkSourceIntact } from '../../media/source-check.js';
import type { Staging } from '../../storage/content-store.js';
import { watermarkEngine } from '../../watermark/engine.js';
import { DEFAULT_SEGMENT_SECONDS } from '../../watermark/segment-rule.js';
import { musicPackaging } from './package-music.js';
import { type ContentType, checkMedia, checkRequest, type IngestRequest } from './ingest-checks.js';
import { videoPackaging } from './package-video.js';
import { markSwitchPoints, segmentsOf } from './packaged-segments.js';
import { type PackageJob, packageVariants } from './packaging.js';
import { makeMusicThumbnail, stillOutputs } from './previews.js';
import {
  type IngestStage,
  type PackagingMeter,
  StageTimes,
  type StagePart,
  startPackagingMeter,
} from './stage-times.js';
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
  segmentSeconds: number;
  /** the DTCWT backend that marked the video */
  backend: string | null;
  seconds: number;
  /** with an organization: what its balance paid for the mark (micro-APUSD), and whether a pass waived it */
  charge?: WatermarkCharge;
  /** where the time went, stage by stage (./stage-times.ts) */
  stages: IngestStage[];
}

// The checks live beside ingest; callers (the queue, the CLI) still find them here.
export { checkMedia, checkRequest };

/**
 * Plain HLS, or variants A and B that the watermark engine marks; returns the DTCWT backend that
 * marked video, if one did, and where the CPU went (Linux).
 */
async function packageContent(
  ctx: Context,
  r: IngestRequest,
  job: PackageJob,
  contentId: string,
  hooks: IngestHooks,
): Promise<{ backend: string | null; parts?: StagePart[] }> {
  const packaging = r.type === 'music' ? musicPackaging : videoPackaging;
  const meter = startPackagingMeter();
  try {
    const backend = await meter.run(async () => {
      if (r.watermark) return packageMarked(ctx, r, job, contentId, hooks, meter);
      await packaging.plain(job);
      meter.ended('transcode');
      return null;
    });
    return { backend, parts: meter.finish() };
  } catch (err) {
    meter.finish();
    throw err;
  }
}

async function packageMarked(
  ctx: Context,
  r: IngestRequest,
  job: PackageJob,
  contentId: string,
  hooks: IngestHooks,
  meter: PackagingMeter,
): Promise<string | null> {
  const packaging = r.type === 'music' ? musicPackaging : videoPackaging;
  // Named after the work, not when made: a CUDA backend that turned to the CPU on a driver error
  // says so in its name, and the job's record then keeps it.
  let used: { name: string } | null = null;
  const make = hooks.backend;
  const backend =
    make &&
    (async () => {
      const b = await make();
      used = b;
      meter.marksWith(b);
      return b;
    });
  const request = {
    bins: job.bins,
    key: ctx.keys.watermark,
    contentId,
    input: r.input,
    info: job.info,
    referenceDir: job.dir,
    segmentSeconds: job.segmentSeconds,
    ...(r.type === 'video' && { stills: stillOutputs(job.info, job.dir) }),
    backend,
    signal: job.signal,
  };
  await packageVariants(job, await watermarkEngine(r.type).variants(request), packaging.markedArgs(job), meter);
  return (used as { name: string } | null)?.name ?? null;
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
 * (with variants A and B for --watermark) with the thumbnail and preview, and publishes: the
 * files move into place in one rename and the catalog row follows. Any failure, or the signal, removes everything it
 * wrote.
 */
export async function ingestContent(ctx: Context, r: IngestRequest, hooks: IngestHooks = {}): Promise<IngestResult> {
  checkRequest(r);
  const times = new StageTimes();
  const info = await probeMedia(ctx.media, r.input);
  times.lap('probe');
  checkMedia(r, info);
  // Before the fee and the staging: a source cut short would otherwise be packaged, and paid for, as a shorter item.
  // One that pays the watermark fee (video for an organization) is decoded whole, so damage inside packets shows too.
  const paid = Boolean(r.organizationId && r.watermark && r.type === 'video');
  await checkSourceIntact(ctx.media, r.input, info, hooks.signal, paid);
  times.lap('source-check');
  await sweepAbandonedIngests(ctx);
  times.lap('sweep');
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
      times.lap('fee');
    }
    return { ...(await packageAndPublish(ctx, r, info, staging, hooks, times)), ...(charge && { charge }) };
  } catch (err) {
    // Refunded before the staging goes: if the refund fails, the next ingest's sweep gives it back.
    if (charge) await refundWatermarkFee(ctx, charge);
    await staging.discard();
    throw err;
  }
}

/** What packaging needs: the staging directory, the key's info file for ffmpeg, the encoder settings. */
function packageJobFor(
  ctx: Context,
  r: IngestRequest,
  info: MediaInfo,
  staging: Staging,
  key: Buffer,
  hooks: IngestHooks,
): PackageJob {
  const perSecond = r.watermark && r.type === 'video' && info.video?.fps ? info.video.fps : 1;
  return {
    bins: ctx.media,
    input: r.input,
    info,
    dir: staging.dir,
    keyInfo: writeKeyInfo(staging.dir, key),
    segmentSeconds: r.segmentSeconds ?? DEFAULT_SEGMENT_SECONDS,
    crf: r.crf ?? 18,
    preset: r.preset ?? 'fast',
    signal: hooks.signal,
    // the video marker counts frames; every stage is shown in seconds of media
    onProgress: (d, n) =>
      hooks.onProgress?.(r.watermark ? 'marking A and B' : 'packaging', d / perSecond, n / perSecond),
  };
}

async function packageAndPublish(
  ctx: Context,
  r: IngestRequest,
  info: MediaInfo,
  staging: Staging,
  hooks: IngestHooks,
  times: StageTimes,
): Promise<IngestResult> {
  const started = times.lastLapAt; // so that `seconds` covers every stage from packaging on, the staging's creation too
  const bins = ctx.media;
  const contentId = staging.id;
  try {
    const key = randomBytes(16);
    const job = packageJobFor(ctx, r, info, staging, key, hooks);
    const packaged = await packageContent(ctx, r, job, contentId, hooks);
    times.lap('package', packaged.parts);
    await markSwitchPoints(ctx, staging.dir, r.watermark, key, hooks.signal);
    const segments = segmentsOf(staging.dir, r.watermark);
    times.lap('discontinuities');
    if (r.type === 'music') {
      // a video's stills came from the packaging decode (./previews.ts)
      hooks.onProgress?.('thumbnail', 0, 1);
      await makeMusicThumbnail(bins, r.input, staging.dir, hooks.signal);
      times.lap('thumbnail');
      hooks.onProgress?.('thumbnail', 1, 1);
    }
    for (const f of ['segment.key', 'segment.keyinfo']) fs.rmSync(path.join(staging.dir, f));
    hooks.signal?.throwIfAborted();

    const duration = segments.reduce((s, x) => s + x.duration, 0) || info.duration;
    const resolution = r.type === 'video' && info.video ? resolutionLabel(info.video.width, info.video.height) : null;
    const storagePath = await staging.publish();
    times.lap('store');
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
        segmentSeconds: job.segmentSeconds,
        storagePath,
        contentKey: seal(ctx.keys.seal, key.toString('base64')),
        status: 'ready',
        createdAt: ctx.clock.now(),
      });
      if (r.organizationId) await licenseForOrganization(tx, r.organizationId, contentId, r.type, r.watermark);
    });
    staging.committed();
    times.lap('database');
    ctx.log.info('content ingested', { contentId, type: r.type, watermarked: r.watermark, segments: segments.length });
    return {
      contentId,
      title: r.title.trim(),
      type: r.type,
      duration: Math.round(duration * 10) / 10,
      resolution,
      isWatermarked: r.watermark,
      segmentCount: segments.length,
      segmentSeconds: job.segmentSeconds,
      backend: packaged.backend,
      seconds: (performance.now() - started) / 1000,
      stages: times.stages,
    };
  } catch (err) {
    // ingestContent discards the staging (after any refund); a cancelled ingest says it was cancelled
    hooks.signal?.throwIfAborted();
    throw err;
  }
}
