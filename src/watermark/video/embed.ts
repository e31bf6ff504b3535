import os from 'node:os';
import path from 'node:path';
import type { DtcwtBackend } from '../../../gpu/backend.js';
import { DrmError } from '../../errors.js';
import { FramePool } from '../../media/frame-pool.js';
import { type VideoOutput, yuv420Size, yuvFrames } from '../../media/video-frames.js';
import { startPipeEncoder } from '../../media/encode.js';
import { type MediaInfo, probeMedia } from '../../media/probe.js';
import { reducedSize } from '../../../gpu/resample.js';
import { type EmbedJob, segmentAt, variantFor } from '../segments.js';
import { inOrder } from '../in-order.js';
import { videoReferenceOutputs } from './reference.js';
import {
  DEFAULT_VIDEO_MARK,
  markFrames,
  patternLength,
  segmentGains,
  segmentPattern,
  type VideoMarkParams,
} from './mark.js';

/** `output` is an .mp4 (x264, the original's audio). */
export interface VideoEmbedOptions extends EmbedJob {
  backend: DtcwtBackend;
  params?: VideoMarkParams;
  /** x264 quality of the marked copy (default 18: visually lossless, so the mark is what differs) */
  crf?: number;
  preset?: string;
  /** where to write the detection reference (./reference.ts) from the same decode, if wanted */
  reference?: string;
  onProgress?: (doneFrames: number, totalFrames: number) => void;
}

export interface VideoEmbedResult {
  frames: number;
  segments: number;
  width: number;
  height: number;
  fps: number;
}

/** Audio codecs an MP4 holds as they are; anything else is re-encoded to AAC. */
const MP4_AUDIO = new Set(['aac', 'mp3', 'alac', 'ac3', 'eac3', 'opus']);

/** What marking a video needs: the key, the content, the file and the backend that runs the transform. */
export interface VideoMarkingJob {
  bins: EmbedJob['bins'];
  key: Buffer;
  contentId: string;
  input: string;
  /** the input's probe, where the caller has one; probed here otherwise */
  info?: MediaInfo;
  backend: DtcwtBackend;
  params?: VideoMarkParams;
  /** where to write the detection reference (./reference.ts) from the same decode, if wanted */
  reference?: string;
  /** more outputs of the same decode (ingest's thumbnail and preview) */
  stills?: readonly VideoOutput[];
  /** how long each segment is (seconds): the frames of one segment share its pattern */
  segmentSeconds: number;
  signal?: AbortSignal;
}

/** A video checked for marking, and its frames marked on demand. */
export interface VideoMarking {
  info: MediaInfo;
  width: number;
  height: number;
  fps: number;
  /** the frame count the duration promises (the decoder may deliver a few more or fewer) */
  expectedFrames: number;
  /**
   * Every frame (yuv420p) of the input in order, marked with the variant(s) that `want` asks for
   * its segment. Frames of several segments are in flight at once, one window per core. Call
   * `release` once A and B are written: their memory then serves later frames.
   */
  frames(want: (segment: number) => 'A' | 'B' | 'both'): AsyncGenerator<MarkedYuvFrame>;
}

export interface MarkedYuvFrame {
  A?: Uint8Array;
  B?: Uint8Array;
  release(): void;
}

interface FrameRun {
  segment: number;
  frames: Uint8Array[];
}

/** Consecutive frames in runs of up to `length`, a run never spanning two segments (their gains differ). */
async function* segmentRuns(
  source: AsyncIterable<Uint8Array>,
  timing: { fps: number; segmentSeconds: number },
  length: number,
): AsyncGenerator<FrameRun> {
  let run: FrameRun | undefined;
  let index = 0;
  for await (const frame of source) {
    const segment = segmentAt(index++ / timing.fps, timing.segmentSeconds);
    if (run && (run.segment !== segment || run.frames.length >= length)) {
      yield run;
      run = undefined;
    }
    if (run) run.frames.push(frame);
    else run = { segment, frames: [frame] };
  }
  if (run) yield run;
}

/** ffmpeg input options that read the marked frames (yuv420p) from stdin. */
export function rawVideoInput(v: { width: number; height: number; fps: number }): string[] {
  return ['-f', 'rawvideo', '-pix_fmt', 'yuv420p', '-s', `${v.width}x${v.height}`, '-r', String(v.fps), '-i', 'pipe:0'];
}

/** Probes and checks the input (a video stream big enough to carry the mark) before any work. */
export async function openVideoMarking(o: VideoMarkingJob): Promise<VideoMarking> {
  const info = o.info ?? (await probeMedia(o.bins, o.input));
  if (!info.video) throw new DrmError('BAD_REQUEST', `${path.basename(o.input)} has no video stream to mark`);
  const { width, height, fps } = info.video;
  if (width < 64 || height < 64)
    throw new DrmError(
      'BAD_REQUEST',
      `${path.basename(o.input)} is ${width}x${height}: too small to carry a watermark (at least 64x64)`,
    );
  if (!(fps > 0)) throw new DrmError('BAD_REQUEST', `${path.basename(o.input)} has no usable frame rate`);
  const params = o.params ?? DEFAULT_VIDEO_MARK;
  const reduced = reducedSize(width, height, params.scale);
  if (Math.min(reduced.width, reduced.height) < 2 ** params.levels)
    throw new DrmError('BAD_REQUEST', `${path.basename(o.input)} is too small for ${params.levels} DTCWT levels`);
  const count = patternLength(width, height, params);

  async function* frames(want: (segment: number) => 'A' | 'B' | 'both') {
    const gains = new Map<number, Float32Array>();
    const gainsOf = (segment: number) => {
      let g = gains.get(segment);
      if (!g) {
        // Frames arrive in order, a window at a time: the previous segment's gains may still be in use.
        for (const s of gains.keys()) if (s < segment - 1) gains.delete(s);
        g = segmentGains(segmentPattern(o.key, o.contentId, segment, count), params);
        gains.set(segment, g);
      }
      return g;
    };
    const pool = new FramePool(yuv420Size(width, height), o.backend.pinning);
    const mark = async (run: FrameRun): Promise<MarkedYuvFrame[]> => {
      const wanted = want(run.segment);
      const into = wanted === 'both' ? run.frames.map(() => pool.take()) : undefined;
      const marked = await markFrames(o.backend, run.frames, width, height, gainsOf(run.segment), wanted, params, into);
      // The memory the pool gave goes back: a backend writes the variants into it or leaves it unused.
      return marked.map((m, k) => ({
        ...m,
        release: () => {
          pool.give(run.frames[k]);
          pool.give(into?.[k]);
        },
      }));
    };
    // Runs in flight: two per core for the CPU pool; for a GPU, enough to fill all its batches.
    const wanted = o.backend.framesInFlight?.(width, height) ?? 0;
    const window = Math.max(2, os.availableParallelism() * 2, Math.ceil(wanted / (params.deltaFrames ?? 1)));
    const sideOutputs = [
      ...(o.reference ? videoReferenceOutputs(o.reference, width, height, params) : []),
      ...(o.stills ?? []),
    ];
    const runs = segmentRuns(
      yuvFrames(o.bins, o.input, { width, height, fps, sideOutputs, signal: o.signal, memory: () => pool.take() }),
      { fps, segmentSeconds: o.segmentSeconds },
      params.deltaFrames ?? 1,
    );
    try {
      for await (const marked of inOrder(runs, mark, window)) yield* marked;
    } finally {
      await pool.close(); // after an abort too: the frames still in flight are awaited first
    }
  }
  return { info, width, height, fps, expectedFrames: Math.max(1, Math.round(info.duration * fps)), frames };
}

/**
 * Writes the copy a viewer with this binaryId receives: every frame of segment s marked with the
 * variant the content's rule serves that id there, as one continuous MP4 with the original's audio. Frames stream from
 * one ffmpeg to another through the DTCWT backend; the chroma planes pass through untouched.
 */
export async function embedVideo(o: VideoEmbedOptions): Promise<VideoEmbedResult> {
  const marking = await openVideoMarking({ ...o, segmentSeconds: o.rule.segmentSeconds });
  const { info, width, height, fps } = marking;
  const audio = info.audio
    ? [
        '-map',
        '1:a:0',
        '-c:a',
        MP4_AUDIO.has(info.audio.codec) ? 'copy' : 'aac',
        ...(MP4_AUDIO.has(info.audio.codec) ? [] : ['-b:a', '192k']),
      ]
    : [];
  const encoder = startPipeEncoder(
    o.bins.ffmpeg,
    [
      '-v',
      'error',
      '-y',
      ...rawVideoInput(marking),
      ...(info.audio ? ['-i', o.input] : []),
      '-map',
      '0:v:0',
      ...audio,
      '-c:v',
      'libx264',
      '-crf',
      String(o.crf ?? 18),
      '-preset',
      o.preset ?? 'fast',
      '-pix_fmt',
      'yuv420p',
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
    ],
    o.output,
    `the marked copy of ${o.input}`,
  );

  let frames = 0;
  try {
    for await (const marked of marking.frames((segment) => variantFor(o.bits, segment, o.rule))) {
      await encoder.write((marked.A ?? marked.B) as Uint8Array);
      marked.release();
      frames++;
      o.onProgress?.(frames, Math.max(marking.expectedFrames, frames));
    }
    o.signal?.throwIfAborted();
    if (frames === 0) throw new DrmError('BAD_REQUEST', `${o.input} has no video frames`);
    await encoder.finish();
  } catch (err) {
    await encoder.abort();
    throw err;
  }
  return { frames, segments: segmentAt((frames - 1) / fps, o.rule.segmentSeconds) + 1, width, height, fps };
}
