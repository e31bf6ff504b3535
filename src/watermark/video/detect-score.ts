import os from 'node:os';
import type { Transform } from '../../../gpu/backend.js';
import { DrmError } from '../../errors.js';
import { preciseLumaFrames } from '../../media/video-frames.js';
import { inOrder, readAhead } from '../in-order.js';
import { bitFromZ } from '../score.js';
import { type SegmentReading, segmentAt } from '../segments.js';
import type { VideoDetectOptions } from './detect-options.js';
import type { LeakSamples } from './leak-samples.js';
import { analyse, patternLength, segmentPattern, type VideoMarkParams } from './mark.js';
import { placeFrame } from './frame-map.js';
import { type LeakPlacement, restoreLeak } from './restore.js';
import { nullPatterns, SegmentScore } from './score.js';

/**
 * Frames scored per segment. Measured on a 2-min 1080p leak (12 segments): min |z| 18.3, 18.7,
 * 18.6, 18.7, 18.7 and median 32.1, 33.1, 33.8, 33.9, 33.9 with 5, 10, 20, 30 and 60 frames;
 * the same leak at 720p CRF 35: min 4.1, 6.7, 7.6, 7.7 and median 10.2, 9.9, 11.9, 11.6 with 3,
 * 5, 10 and 20. The frames of one segment carry the same mark and much the same picture, so
 * past ten they add time, not evidence (each frame scored is two transforms).
 */
export const FRAMES_PER_SEGMENT = 10;

/**
 * Frames in flight while scoring: while the main thread restores the next leak frames, the pool's
 * workers must have transforms queued. Measured on a 2-min leak (120 frames): 5.3, 5.2 and 4.1 s
 * with 2, 4 and 8; each frame in flight holds two planes and their transforms (a few MB).
 */
const SCORING_WINDOW = Math.min(32, 4 * Math.max(2, os.availableParallelism()));

/** Frames each decoder of the scoring stage keeps ready (one reference frame scored is about thirty decoded). */
const READ_AHEAD = 8;

/** The leak samples to score: up to `perSegment` of each segment, evenly spread over what the leak holds of it. */
export interface ChosenFrames {
  /** the aligned samples of each segment */
  bySegment: Map<number, number[]>;
  /** every sample that lines up with an original frame */
  aligned: number[];
  chosen: Set<number>;
}

export function chooseFrames(
  frameMap: Int32Array,
  timing: { fps: number; segmentSeconds: number },
  perSegment: number,
): ChosenFrames {
  const { fps, segmentSeconds } = timing;
  const bySegment = new Map<number, number[]>();
  const aligned = [...frameMap.keys()].filter((k) => (frameMap[k] as number) >= 0);
  for (const k of aligned) {
    const s = segmentAt((frameMap[k] as number) / fps, segmentSeconds);
    const ks = bySegment.get(s);
    if (ks) ks.push(k);
    else bySegment.set(s, [k]);
  }
  const chosen = new Set<number>();
  for (const ks of bySegment.values()) {
    const n = Math.min(perSegment, ks.length);
    for (let m = 0; m < n; m++) chosen.add(ks[Math.floor(((m + 0.5) * ks.length) / n)] as number);
  }
  return { bySegment, aligned, chosen };
}

export interface ScoringJob {
  reference: string;
  leak: LeakSamples;
  W: number;
  H: number;
  fps: number;
  params: VideoMarkParams;
  /** the leak samples (proxy frames) to score */
  chosen: Set<number>;
  frameMap: Int32Array;
  placement: LeakPlacement;
}

/**
 * Stage 3 of detection: reads the proxies and the reference once, in step, and scores each
 * chosen frame (put back into the original's geometry) against its original.
 */
export async function scoreSegments(o: VideoDetectOptions, job: ScoringJob): Promise<Map<number, SegmentScore>> {
  const { W, H, fps, params, chosen, frameMap, placement } = job;
  const count = patternLength(W, H, params);
  const scores = new Map<number, SegmentScore>();
  // Only the frames scored come out of ffmpeg (the rest are decoded, not piped and converted).
  const samples = [...chosen].sort((a, b) => a - b);
  const needed = [...new Set(samples.map((k) => frameMap[k] as number))].sort((a, b) => a - b);
  const proxies = readAhead(job.leak.proxies(samples, { width: W, height: H, signal: o.signal }), READ_AHEAD);
  const originals = readAhead(
    preciseLumaFrames(o.bins, job.reference, { width: W, height: H, fps, select: needed, signal: o.signal }),
    READ_AHEAD,
  )[Symbol.asyncIterator]();
  let read = 0;
  const held = new Map<number, Float32Array>();
  const originalFrame = async (i: number): Promise<Float32Array> => {
    while (!held.has(i)) {
      const next = await originals.next();
      if (next.done) throw new DrmError('INTERNAL_ERROR', `original frame ${i} was not decoded`);
      held.set(needed[read++] as number, next.value);
    }
    return held.get(i) as Float32Array;
  };
  // How many samples still need each original: a leak whose pieces come out of order (./align-pieces.ts)
  // needs originals out of order, so each is held from its decode to its last use, and no longer.
  const uses = new Map<number, number>();
  for (const k of samples) uses.set(frameMap[k] as number, (uses.get(frameMap[k] as number) ?? 0) + 1);
  async function* pairsToScore() {
    let n = 0;
    for await (const proxy of proxies) {
      const i = frameMap[samples[n++] as number] as number;
      const original = await originalFrame(i);
      const left = (uses.get(i) as number) - 1;
      uses.set(i, left);
      if (left === 0) held.delete(i);
      const placed = placement.perFrame ? placeFrame(proxy, original, W, H, placement) : placement;
      yield { i, leak: restoreLeak(proxy, original, W, H, placed), original };
    }
  }
  const transforms = async (p: { i: number; leak: Float32Array; original: Float32Array }) => {
    const [ot, st] = await Promise.all([
      analyse(o.backend, p.original, W, H, params),
      analyse(o.backend, p.leak, W, H, params),
    ]);
    return { i: p.i, ot, st };
  };
  let done = 0;
  try {
    for await (const { i, ot, st } of inOrder(pairsToScore(), transforms, SCORING_WINDOW)) {
      const s = segmentAt(i / fps, o.rule.segmentSeconds);
      let score = scores.get(s);
      if (!score) {
        score = new SegmentScore(count, params);
        scores.set(s, score);
      }
      score.addFrame(ot as Transform, st as Transform);
      o.onProgress?.('score', ++done, chosen.size);
    }
  } finally {
    await originals.return?.(undefined);
  }
  o.signal?.throwIfAborted();
  return scores;
}

/** Each segment's calibrated z and bit, in segment order, with the seconds of the leak that fell in it. */
export function readSegments(
  o: VideoDetectOptions,
  scores: Map<number, SegmentScore>,
  count: number,
  coverage: (segment: number) => number,
): SegmentReading[] {
  return [...scores.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, score]) => {
      const z = score.z(segmentPattern(o.key, o.contentId, index, count));
      const reading: SegmentReading = { index, z, bit: bitFromZ(z), coverage: coverage(index), reach: score.reach() };
      if (o.nullPatterns)
        reading.nullZ = nullPatterns(o.key, o.contentId, index, count, o.nullPatterns).map((p) => score.z(p));
      return reading;
    });
}
