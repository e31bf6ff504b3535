import fs from 'node:fs';
import os from 'node:os';
import { DrmError } from '../../errors.js';
import { lumaFrames } from '../../media/video-frames.js';
import { activeArea, alignTime, centralRegion, framePositions, signature, type TimeAlignment } from './align.js';
import { realignPieces } from './align-pieces.js';
import { flipped, MIRRORS, type Mirror, mirroredSamples } from './mirror.js';
import type { VideoDetectOptions, VideoInfo } from './detect-options.js';
import { type LeakSamples, sampleLeak } from './leak-samples.js';
import { thumbSize, thumbsBeside } from './reference.js';

/**
 * About every how many original frames a leak frame is kept (as a proxy and a thumbnail) for
 * alignment, geometry and scoring. Scoring takes 10 frames of a 10-s segment's 250–300; a
 * quarter of them leaves it a wide choice, time alignment still sees a frame every 0.13 s
 * against every frame of the original, and the scaling and the proxy encode stay a small part of
 * the decode. A frame is kept when it comes at least 3.5 frames after the last one kept, among
 * those decoded: every fourth frame when all are, about every fourth of an x264 film whose
 * unreferenced B-frames are skipped.
 */
const PROXY_EVERY = 4;

/**
 * Past this mean gap between samples (in original frames), a leak sampled without its
 * unreferenced frames is sampled again with them: a stream whose frames nearly all go unreferenced
 * would otherwise leave only its keyframes to align and score.
 */
const SPARSEST_SAMPLING = 2 * PROXY_EVERY;

/** Time ranges of the leak decoded at once, one per core up to this (./leak-samples.ts). */
const MAX_PARTS = 4;

/** The leak decoded once into samples, and lined up in time with the reference's thumbnails. */
export interface TimedLeak {
  sampled: LeakSamples;
  /** the reference's thumbnails, every frame */
  origThumbs: Uint8Array[];
  /** the thumbnails' size: the reference's (width × height) and the leak's (width × leakHeight, its own aspect) */
  thumb: { width: number; height: number; leakHeight: number };
  time: TimeAlignment;
  /** the seconds of the leak that samples `ks` stand for */
  seconds: (ks: readonly number[]) => number;
  /** how the leak's pictures were mirrored (its samples are seen flipped back) */
  mirror: Mirror;
}

/**
 * Stage 1 of detection: the one decode of the leak, into thumbnails and proxies of about every
 * PROXY_EVERY-th frame (the leak's samples), and the time offset that lines those thumbnails up
 * with the reference's. The reference's thumbnails, of every frame, were written at ingest
 * (content from before that has them made from the reference). One alignment per orientation the
 * pictures leave plausible (./mirror.ts), the best lined up first: which one carries the mark is for
 * the segments to say.
 */
export async function alignLeakInTime(
  o: VideoDetectOptions,
  reference: string,
  work: string,
  orig: VideoInfo,
  leak: VideoInfo,
): Promise<TimedLeak[]> {
  const { width: W, height: H, fps } = orig;
  const { width: tw, height: th } = thumbSize(W, H);
  // The leak's thumbnails keep its own aspect (the whole leak frame, black bars and all).
  const lth = thumbSize(leak.width, leak.height).height;
  const thumbs = thumbsBeside(reference);
  const expected = Math.max(1, Math.round((leak.duration * fps) / PROXY_EVERY));
  o.onProgress?.('decode', 0, expected);
  const sample = (skipNonReference: boolean) =>
    sampleLeak(o.bins, o.leak, {
      duration: leak.duration,
      parts: Math.min(MAX_PARTS, os.availableParallelism()),
      dir: work,
      fps,
      spacing: (PROXY_EVERY - 0.5) / fps,
      skipNonReference,
      thumb: { width: tw, height: lth },
      proxy: { width: W, height: H },
      signal: o.signal,
      onSample: (n) => {
        if (n % 25 === 0) o.onProgress?.('decode', n, Math.max(n, expected));
      },
    });
  const [origThumbs, sampled] = await Promise.all([
    collect(
      lumaFrames(o.bins, fs.existsSync(thumbs) ? thumbs : reference, { width: tw, height: th, fps, signal: o.signal }),
    ),
    sample(true).then((s) => (meanGap(s.times) * fps > SPARSEST_SAMPLING ? sample(false) : s)),
  ]);
  if (sampled.thumbs.length === 0) throw new DrmError('BAD_REQUEST', `the leak ${o.leak} has no video frames`);
  o.onProgress?.('decode', sampled.thumbs.length, sampled.thumbs.length);
  const origSigs = origThumbs.map((f) => signature(f, tw, centralRegion({ x: 0, y: 0, w: tw, h: th })));
  const positions = framePositions(sampled.times, fps);
  const spans = sampleSpans(sampled.times, PROXY_EVERY / fps);
  const seconds = (ks: readonly number[]) => ks.reduce((sum, k) => sum + (spans[k] as number), 0);
  const thumb = { width: tw, height: th, leakHeight: lth };
  return plausibleOrientations(sampled.thumbs, origSigs, positions, tw, lth).map(({ mirror, leakSigs, time }) => ({
    sampled: mirroredSamples(sampled, mirror, { width: tw, height: lth }),
    origThumbs,
    thumb,
    time: realignPieces(time, leakSigs, origSigs),
    seconds,
    mirror,
  }));
}

/**
 * An orientation is plausible when its pictures line up within this much of the best one's
 * correlation. Pictures decide little between orientations of footage that looks alike mirrored
 * (sky, water, a smooth pan): the mark then decides, read both ways.
 */
const PLAUSIBLE_WITHIN = 0.15;

/** At most this many orientations are read: each reading costs a placement and a scoring pass. */
export const MOST_ORIENTATIONS = 2;

/**
 * The orientations of the leak's pictures that may line up with the original, best first (at most
 * MOST_ORIENTATIONS), each with its signatures and global alignment. A copy mirrored or not lines
 * up far better one way on most footage, and costs one reading.
 */
function plausibleOrientations(
  thumbs: readonly Uint8Array[],
  origSigs: readonly Float32Array[],
  positions: Int32Array,
  tw: number,
  lth: number,
) {
  const all = MIRRORS.map((mirror) => {
    const seen = thumbs.map((t) => flipped(t, tw, lth, mirror));
    const active = activeArea(seen, tw, lth);
    const leakSigs = seen.map((f) => signature(f, tw, centralRegion(active)));
    return { mirror, leakSigs, time: alignTime(leakSigs, origSigs, positions) };
  }).sort((a, b) => b.time.correlation - a.time.correlation);
  const best = (all[0] as (typeof all)[number]).time.correlation;
  return all.filter((o) => o.time.correlation >= best - PLAUSIBLE_WITHIN).slice(0, MOST_ORIENTATIONS);
}

async function collect<T>(gen: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const f of gen) out.push(f);
  return out;
}

/** The mean time between a leak's samples in seconds (0 with fewer than two). */
function meanGap(times: Float64Array): number {
  const n = times.length;
  return n < 2 ? 0 : (times[n - 1] as number) / (n - 1);
}

/** The seconds of the leak each sample stands for: up to the next sample (the last one, the mean gap or `alone`). */
function sampleSpans(times: Float64Array, alone: number): Float64Array {
  const n = times.length;
  const mean = n < 2 ? alone : meanGap(times);
  return Float64Array.from({ length: n }, (_, k) =>
    k + 1 < n ? (times[k + 1] as number) - (times[k] as number) : mean,
  );
}
