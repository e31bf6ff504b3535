import path from 'node:path';
import type { Context } from '../../context.js';
import { DrmError } from '../../errors.js';
import { type HlsSegment, playlistIn, readPlaylist } from '../../media/hls.js';
import { markVariantDiscontinuities } from '../../media/segment-discontinuity.js';

/** Variants A and B must cut at the same instants, or a viewer's sequence would jump. */
export function segmentsOf(dir: string, watermarked: boolean): HlsSegment[] {
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
 * Every segment's first packet of each PES stream marked as a discontinuity, so a session that
 * moves between A and B plays on without a continuity error (src/media/ts-discontinuity.ts).
 * Plain content never switches, but gets the same segments for uniformity: the pass is cheap.
 */
export async function markSwitchPoints(
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
