import type { MediaBinaries } from '../../media/binaries.js';
import { transcode } from '../../media/transcode.js';

/**
 * What music detection compares a leak with, kept beside a watermarked track at ingest (the
 * video's counterpart is ../video/reference.ts): the original mixed to mono at its own rate, which
 * is what the detector reads, as FLAC. The source file is not kept.
 */
export const MUSIC_REFERENCE = 'reference.flac';

/** Writes the music reference of `input` (its first audio stream, mono, lossless). */
export async function writeMusicReference(
  bins: MediaBinaries,
  input: string,
  file: string,
  signal?: AbortSignal,
): Promise<void> {
  await transcode(bins, ['-i', input, '-map', '0:a:0', '-ac', '1', '-c:a', 'flac', '-f', 'flac', file], {
    what: 'the detection reference of the music',
    signal,
  });
}
