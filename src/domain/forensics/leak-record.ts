import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { Context } from '../../context.js';
import type { ContentRow } from '../../db/repos/index.js';
import { DrmError } from '../../errors.js';
import { errorFields } from '../../log.js';
import { probeMedia } from '../../media/probe.js';
import { softwareVersion } from '../../version.js';
import type { Detection } from '../../watermark/segments.js';
import { alignedFrames, type FramePair } from './leak-frames.js';

/**
 * What the leak itself was, taken down while it is on disk: the upload is removed when its case
 * ends, and an evidence report rendered later (GET …/cases/{id}/report) must still say which
 * file was analysed, by which software, and show it beside the original.
 */
export interface LeakRecord {
  /** hex SHA-256 of the file as it was received */
  sha256: string;
  bytes: number;
  /** seconds, as ffprobe reads the file; null when it could not tell */
  durationSeconds: number | null;
  /** when the analysis ended (ms since the epoch) */
  analysedAt: number;
  /** the software that analysed it, e.g. "drm 0.1.0" */
  software: string;
  frames: FramePair[];
  /** why there are no frames, when there are none */
  framesNote?: string;
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(fs.createReadStream(file), hash);
  return hash.digest('hex');
}

async function probed(ctx: Context, leak: string): Promise<{ duration: number | null; format: string }> {
  try {
    const { duration, formatName } = await probeMedia(ctx.media, leak);
    return { duration: duration > 0 ? Math.round(duration * 1000) / 1000 : null, format: formatName };
  } catch {
    return { duration: null, format: 'unknown' };
  }
}

/**
 * The pictures, or the reason there are none. They are an aid to the reader, not evidence the
 * finding rests on: a failure to make them is logged and noted, never a failed analysis.
 */
async function framesOf(
  ctx: Context,
  leak: string,
  content: ContentRow,
  detection: Pick<Detection, 'segments' | 'alignment'>,
  probe: { duration: number | null; format: string },
  signal?: AbortSignal,
): Promise<Pick<LeakRecord, 'frames' | 'framesNote'>> {
  const leakDuration = probe.duration;
  if (content.type !== 'video')
    return { frames: [], framesNote: 'The content is music: there are no pictures to compare.' };
  const offset = detection.alignment.offsetSeconds;
  if (typeof offset !== 'number' || leakDuration === null || detection.segments.length === 0) {
    return { frames: [], framesNote: 'The leak could not be lined up with the original, so no pictures are paired.' };
  }
  try {
    const frames = await alignedFrames(
      ctx,
      leak,
      content,
      { segments: detection.segments, offsetSeconds: offset, leakDuration, leakFormat: probe.format },
      signal,
    );
    return frames.length > 0 ? { frames } : { frames, framesNote: 'The leak covers no segment long enough to show.' };
  } catch (err) {
    signal?.throwIfAborted();
    ctx.log.warn('could not make the evidence report pictures', { contentId: content.id, ...errorFields(err) });
    const why = err instanceof DrmError && err.code !== 'INTERNAL_ERROR' ? err.message : 'an internal error';
    return { frames: [], framesNote: `The pictures could not be made (${why}).` };
  }
}

/** Hash, size, duration and aligned pictures of a leak just analysed. */
export async function recordLeak(
  ctx: Context,
  leak: string,
  content: ContentRow,
  detection: Pick<Detection, 'segments' | 'alignment'>,
  signal?: AbortSignal,
): Promise<LeakRecord> {
  const [sha256, probe] = await Promise.all([sha256Of(leak), probed(ctx, leak)]);
  const pictures = await framesOf(ctx, leak, content, detection, probe, signal);
  return {
    sha256,
    bytes: fs.statSync(leak).size,
    durationSeconds: probe.duration,
    analysedAt: ctx.clock.now(),
    software: softwareVersion(),
    ...pictures,
  };
}
