import path from 'node:path';
import { DrmError } from '../../errors.js';
import type { MediaBinaries } from '../../media/binaries.js';
import { splitOutputs, type VideoOutput } from '../../media/video-frames.js';
import { probeMedia } from '../../media/probe.js';
import { transcode } from '../../media/transcode.js';
import { reducedSize } from '../../../gpu/resample.js';
import { DEFAULT_VIDEO_MARK, type VideoMarkParams } from './mark.js';

/**
 * What video detection compares a leak with, kept beside a watermarked item at ingest (detection
 * is not blind). The source file is not kept: it may be huge, and the detector needs
 * little of it (music's: ../music/reference.ts).
 *
 * Video: the mark is made and read on the luma box-reduced by the mark's scale, so that plane,
 * unmarked, is the whole reference: a grey video of 480×270 for a 1080p film, written from the
 * same decode that feeds the marking (no second decode at ingest) and a sixteenth of the pixels
 * to decode at analysis. In 10 bits: the box average has fractions, and on a plane this small
 * 8-bit rounding is noise of the mark's own size (measured: |z| fell by a third to a half with
 * 8-bit planes on a 640×360 film). x264 at CRF 12 keeps it within a fraction of a grey level
 * (about 10 MB a minute, a sixth of the two variants), far below what a leak's own re-encode
 * changes; its error does not correlate with any pattern, so it only adds a little noise.
 *
 * Beside it, a thumbnail of every frame (./align.ts lines a leak up in time on them), from
 * the same decode: the detector would otherwise decode the whole reference again for them, beside
 * the leak's own decode (measured: a tenth of a 10-minute analysis).
 */
export const VIDEO_REFERENCE = 'reference.mp4';

const REFERENCE_CRF = 12;

/** The size of the reference plane of a width × height video. */
export function referenceSize(
  width: number,
  height: number,
  params: VideoMarkParams = DEFAULT_VIDEO_MARK,
): { width: number; height: number } {
  return reducedSize(width, height, params.scale);
}

/** Width of the thumbnails time alignment compares (a leak's are made the same width). */
export const THUMB_WIDTH = 96;

/** The thumbnails of a plane of this size: THUMB_WIDTH wide, its height even. */
export function thumbSize(planeWidth: number, planeHeight: number): { width: number; height: number } {
  return { width: THUMB_WIDTH, height: Math.max(2, 2 * Math.round((THUMB_WIDTH * planeHeight) / planeWidth / 2)) };
}

/** Where the thumbnails of a reference sit: beside it (reference.mp4 → reference-thumbs.mp4). */
export function thumbsBeside(reference: string): string {
  return path.join(path.dirname(reference), `${path.basename(reference, path.extname(reference))}-thumbs.mp4`);
}

/**
 * x264 writing grey planes to `file`, kept well below a grey level's error. Tuned for decoding
 * (CAVLC, no deblocking, which at CRF 12 has almost nothing to smooth): analysis decodes the whole
 * reference to score a leak, and at this bitrate the entropy decoder is most of that (measured on
 * a 2-min reference: 1.6 s of CPU instead of 2.8 s, for a file 16% larger).
 */
const greyVideo = (format: 'gray' | 'gray10le', file: string) => [
  '-c:v',
  'libx264',
  // a small plane, encoded beside the film's own encodes: one thread keeps up and wastes nothing on threading
  '-threads',
  '1',
  '-preset',
  'veryfast',
  '-tune',
  'fastdecode',
  '-crf',
  String(REFERENCE_CRF),
  '-pix_fmt',
  format,
  '-an',
  '-f',
  'mp4',
  file,
];

/**
 * The outputs that write the reference and its thumbnails (thumbsBeside) from a decode of the
 * source (side outputs of the marking decoder). Area scaling by the whole factor is the box
 * average the mark is computed on; the thumbnails are scaled as a leak's are.
 */
export function videoReferenceOutputs(
  file: string,
  width: number,
  height: number,
  params: VideoMarkParams = DEFAULT_VIDEO_MARK,
): VideoOutput[] {
  const r = referenceSize(width, height, params);
  const t = thumbSize(r.width, r.height);
  const crop = `crop=${r.width * params.scale}:${r.height * params.scale}:0:0`;
  return [
    {
      filters: [crop, `scale=${r.width}:${r.height}:flags=area`, 'format=gray10le'],
      args: greyVideo('gray10le', file),
    },
    {
      filters: [crop, `scale=${t.width}:${t.height}:flags=bicubic`, 'format=gray'],
      args: greyVideo('gray', thumbsBeside(file)),
    },
  ];
}

/**
 * Writes the video reference of an original and its thumbnails (what ingest keeps beside a
 * watermarked item), for detecting against an original file: detection always reads a reference.
 */
export async function writeVideoReference(
  bins: MediaBinaries,
  input: string,
  file: string,
  width: number,
  height: number,
  params: VideoMarkParams = DEFAULT_VIDEO_MARK,
  signal?: AbortSignal,
): Promise<void> {
  const outs = videoReferenceOutputs(file, width, height, params);
  await transcode(bins, ['-i', input, ...splitOutputs([], outs)], {
    what: `the detection reference of ${input}`,
    signal,
  });
}

/**
 * The thumbnails of a reference kept before drm wrote them at ingest, made from the reference
 * itself: the detector reads them the same way.
 */
export async function writeVideoReferenceThumbs(
  bins: MediaBinaries,
  reference: string,
  signal?: AbortSignal,
): Promise<void> {
  const plane = (await probeMedia(bins, reference)).video;
  if (!plane) throw new DrmError('BAD_REQUEST', `the reference ${reference} has no video stream`);
  const t = thumbSize(plane.width, plane.height);
  await transcode(
    bins,
    [
      '-i',
      reference,
      '-map',
      '0:v:0',
      '-vf',
      `scale=${t.width}:${t.height}:flags=bicubic,format=gray`,
      ...greyVideo('gray', thumbsBeside(reference)),
    ],
    { what: `the thumbnails of ${reference}`, signal },
  );
}

/**
 * The analysis parameters for a reference plane: the same mark, with the reduction already done
 * (so the transform runs on the plane as it is).
 */
export function referenceParams(params: VideoMarkParams = DEFAULT_VIDEO_MARK): VideoMarkParams {
  return { ...params, scale: 1 };
}
