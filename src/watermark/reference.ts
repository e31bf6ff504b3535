import type { MediaBinaries } from '../media/binaries.js';
import { transcode } from '../media/transcode.js';
import { reducedSize } from '../../gpu/resample.js';
import { DEFAULT_VIDEO_MARK, type VideoMarkParams } from './video-mark.js';

/**
 * What detection compares a leak with, kept beside a watermarked item at ingest (DESIGN.md:
 * detection is not blind). The source file is not kept: it may be huge, and the detector needs
 * little of it.
 *
 * Video: the mark is made and read on the luma box-reduced by the mark's scale, so that plane,
 * unmarked, is the whole reference: a grey video of 480×270 for a 1080p film, written from the
 * same decode that feeds the marking (no second decode at ingest) and a sixteenth of the pixels
 * to decode at analysis. In 10 bits: the box average has fractions, and on a plane this small
 * 8-bit rounding is noise of the mark's own size (measured: |z| fell by a third to a half with
 * 8-bit planes on a 640×360 film). x264 at CRF 12 keeps it within a fraction of a grey level
 * (about 9 MB a minute, a seventh of the two variants), far below what a leak's own re-encode
 * changes; its error does not correlate with any pattern, so it only adds a little noise.
 *
 * Music: the original mixed to mono at its own rate (what the detector reads), as FLAC.
 */
export const VIDEO_REFERENCE = 'reference.mp4';
export const MUSIC_REFERENCE = 'reference.flac';

const REFERENCE_CRF = 12;

/** The size of the reference plane of a width × height video. */
export function referenceSize(width: number, height: number, params: VideoMarkParams = DEFAULT_VIDEO_MARK): { width: number; height: number } {
  return reducedSize(width, height, params.scale);
}

/**
 * The filters and output options that write the reference from a decode of the source (a side
 * output of the marking decoder). Area scaling by the whole factor is the box average the mark
 * is computed on.
 */
export function videoReferenceOutput(file: string, width: number, height: number, params: VideoMarkParams = DEFAULT_VIDEO_MARK): { filters: string[]; args: string[] } {
  const r = referenceSize(width, height, params);
  return {
    filters: [`crop=${r.width * params.scale}:${r.height * params.scale}:0:0`, `scale=${r.width}:${r.height}:flags=area`, 'format=gray10le'],
    args: ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', String(REFERENCE_CRF), '-pix_fmt', 'gray10le', '-an', '-f', 'mp4', file],
  };
}

/**
 * Writes the video reference of an original (what ingest keeps beside a watermarked item), for
 * detecting against an original file: detection always reads a reference plane.
 */
export async function writeVideoReference(bins: MediaBinaries, input: string, file: string, width: number, height: number, params: VideoMarkParams = DEFAULT_VIDEO_MARK, signal?: AbortSignal): Promise<void> {
  const out = videoReferenceOutput(file, width, height, params);
  await transcode(bins, ['-i', input, '-map', '0:v:0', '-vf', out.filters.join(','), ...out.args], { what: `the detection reference of ${input}`, signal });
}

/**
 * The analysis parameters for a reference plane: the same mark, with the reduction already done
 * (so the transform runs on the plane as it is).
 */
export function referenceParams(params: VideoMarkParams = DEFAULT_VIDEO_MARK): VideoMarkParams {
  return { ...params, scale: 1 };
}

/** Writes the music reference of `input` (its first audio stream, mono, lossless). */
export async function writeMusicReference(bins: MediaBinaries, input: string, file: string, signal?: AbortSignal): Promise<void> {
  await transcode(bins, ['-i', input, '-map', '0:a:0', '-ac', '1', '-c:a', 'flac', '-f', 'flac', file], { what: 'the detection reference of the music', signal });
}
