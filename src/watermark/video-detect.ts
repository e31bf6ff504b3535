import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { DtcwtBackend, Transform } from '../../gpu/backend.js';
import { DrmError } from '../errors.js';
import type { MediaBinaries } from '../media/binaries.js';
import { lumaFrameAt, lumaFrames, preciseLumaFrames } from '../media/decode.js';
import { type MediaInfo, probeMedia } from '../media/probe.js';
import { bitFromZ } from './score.js';
import { type Detection, readOut, type SegmentReading, segmentAt } from './segments.js';
import { inOrder, readAhead } from './in-order.js';
import { type LeakSamples, sampleLeak } from './leak-samples.js';
import { referenceParams, thumbSize, thumbsBeside, VIDEO_REFERENCE, writeVideoReference } from './reference.js';
import { activeArea, alignTime, centralRegion, framePositions, refineTime, signature, toneCurve } from './video-align.js';
import { correlation, findRect, type Rect, resizeArea, viewThrough } from './video-geometry.js';
import { analyse, DEFAULT_VIDEO_MARK, patternLength, segmentPattern, type VideoMarkParams } from './video-mark.js';
import { insetRect, type LeakPlacement, restoreLeak } from './video-restore.js';
import { nullPatterns, SegmentScore } from './video-score.js';

export type DetectStage = 'decode' | 'align' | 'score';

export interface VideoDetectOptions {
  bins: MediaBinaries;
  key: Buffer;
  contentId: string;
  leak: string;
  /** the unmarked original, or the reduced reference ingest kept (with `reference`) */
  original: string;
  /**
   * `original` is a reference plane (./reference.ts), its thumbnails beside it where ingest wrote
   * them; otherwise both are made from it first
   */
  reference?: boolean;
  backend: DtcwtBackend;
  params?: VideoMarkParams;
  /** frames scored per segment, evenly spread over what the leak holds of it (default 10) */
  framesPerSegment?: number;
  /** also score each segment against this many patterns of keys never used (SegmentReading.nullZ) */
  nullPatterns?: number;
  /** where the working files go (a reference made from an original, the leak's proxies); the system's by default */
  tempDir?: string;
  /** decode: leak samples (about every fourth frame) decoded of those expected; align: steps done of 2; score: frames scored */
  onProgress?: (stage: DetectStage, done: number, total: number) => void;
  signal?: AbortSignal;
}

const SEARCH_WIDTH = 320;
const SEARCH_FRAMES = 6;
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

/**
 * Frames scored per segment. Measured on a 2-min 1080p leak (12 segments): min |z| 18.3, 18.7,
 * 18.6, 18.7, 18.7 and median 32.1, 33.1, 33.8, 33.9, 33.9 with 5, 10, 20, 30 and 60 frames;
 * the same leak at 720p CRF 35: min 4.1, 6.7, 7.6, 7.7 and median 10.2, 9.9, 11.9, 11.6 with 3,
 * 5, 10 and 20. The frames of one segment carry the same mark and much the same picture, so
 * past ten they add time, not evidence (each frame scored is two transforms).
 */
const FRAMES_PER_SEGMENT = 10;

/**
 * Frames in flight while scoring: while the main thread restores the next leak frames, the pool's
 * workers must have transforms queued. Measured on a 2-min leak (120 frames): 5.3, 5.2 and 4.1 s
 * with 2, 4 and 8; each frame in flight holds two planes and their transforms (a few MB).
 */
const SCORING_WINDOW = Math.min(32, 4 * Math.max(2, os.availableParallelism()));

/** Frames each decoder of the scoring stage keeps ready (one reference frame scored is about thirty decoded). */
const READ_AHEAD = 8;

async function collect<T>(gen: AsyncIterable<T>, onItem?: (count: number) => void): Promise<T[]> {
  const out: T[] = [];
  for await (const f of gen) {
    out.push(f);
    onItem?.(out.length);
  }
  return out;
}

type VideoInfo = NonNullable<MediaInfo['video']> & { duration: number };

async function videoOf(bins: MediaBinaries, file: string, role: string): Promise<VideoInfo> {
  const info = await probeMedia(bins, file);
  if (!info.video) throw new DrmError('BAD_REQUEST', `the ${role} ${file} has no video stream`);
  return { ...info.video, duration: info.duration };
}

/**
 * Reads the mark of every segment a leak holds, with its original at hand (DESIGN.md: detection is
 * not blind). The leak is decoded once (./leak-samples.ts), keeping about every fourth frame as a
 * thumbnail (time alignment) and a proxy at the reference plane's size (geometry and scoring);
 * everything after that reads the proxies and the reference, which are small. Aligns the leak in time and
 * space (./video-align.ts, ./video-geometry.ts), undoes its tone curve, puts each sampled leak
 * frame back into the original's geometry (./video-restore.ts), and scores each segment.
 */
export async function detectVideo(o: VideoDetectOptions): Promise<Detection> {
  const work = fs.mkdtempSync(path.join(o.tempDir ?? os.tmpdir(), 'drm-detect-'));
  try {
    let reference = o.original;
    if (!o.reference) {
      const orig = await videoOf(o.bins, o.original, 'original');
      reference = path.join(work, VIDEO_REFERENCE);
      await writeVideoReference(o.bins, o.original, reference, orig.width, orig.height, o.params ?? DEFAULT_VIDEO_MARK, o.signal);
    }
    return await detectOnReference(o, reference, work);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

async function detectOnReference(o: VideoDetectOptions, reference: string, work: string): Promise<Detection> {
  // The reduction is done in the reference: the leak is brought to the plane's size instead.
  const params = referenceParams(o.params);
  const [orig, leak] = await Promise.all([videoOf(o.bins, reference, 'reference'), videoOf(o.bins, o.leak, 'leak')]);
  const { width: W, height: H, fps } = orig;

  // 1. The one decode of the leak, into thumbnails and proxies of about every PROXY_EVERY-th frame
  // (the leak's samples). The reference's thumbnails, of every frame, were written at ingest
  // (content from before that has them made from the reference).
  const { width: tw, height: th } = thumbSize(W, H);
  // The leak's thumbnails keep its own aspect (the whole leak frame, black bars and all).
  const lth = thumbSize(leak.width, leak.height).height;
  const thumbs = thumbsBeside(reference);
  const expected = Math.max(1, Math.round((leak.duration * fps) / PROXY_EVERY));
  o.onProgress?.('decode', 0, expected);
  const sample = (skipNonReference: boolean) =>
    sampleLeak(o.bins, o.leak, {
      duration: leak.duration, parts: Math.min(MAX_PARTS, os.availableParallelism()), dir: work,
      fps, spacing: (PROXY_EVERY - 0.5) / fps, skipNonReference, thumb: { width: tw, height: lth }, proxy: { width: W, height: H }, signal: o.signal,
      onSample: (n) => {
        if (n % 25 === 0) o.onProgress?.('decode', n, Math.max(n, expected));
      },
    });
  const [origThumbs, sampled] = await Promise.all([
    collect(lumaFrames(o.bins, fs.existsSync(thumbs) ? thumbs : reference, { width: tw, height: th, fps, signal: o.signal })),
    sample(true).then((s) => (meanGap(s.times) * fps > SPARSEST_SAMPLING ? sample(false) : s)),
  ]);
  const leakThumbs = sampled.thumbs;
  if (leakThumbs.length === 0) throw new DrmError('BAD_REQUEST', `the leak ${o.leak} has no video frames`);
  o.onProgress?.('decode', leakThumbs.length, leakThumbs.length);
  const thumbActive = activeArea(leakThumbs, tw, lth);
  const origSigs = origThumbs.map((f) => signature(f, tw, centralRegion({ x: 0, y: 0, w: tw, h: th })));
  const leakSigs = leakThumbs.map((f) => signature(f, tw, centralRegion(thumbActive)));
  let time = alignTime(leakSigs, origSigs, framePositions(sampled.times, fps));
  const spans = sampleSpans(sampled.times, PROXY_EVERY / fps);
  const seconds = (ks: readonly number[]) => ks.reduce((sum, k) => sum + (spans[k] as number), 0);
  o.onProgress?.('align', 0, 2);

  // 2. Geometry and tone from a few matched samples (k: proxy frame k).
  const matched = [...time.frameMap.keys()].filter((k) => (time.frameMap[k] as number) >= 0);
  if (matched.length === 0) throw new DrmError('BAD_REQUEST', `the leak ${o.leak} shows nothing of the original`);
  const picks = Array.from(new Set(Array.from({ length: SEARCH_FRAMES }, (_, k) => matched[Math.floor(((k + 0.5) * matched.length) / SEARCH_FRAMES)] as number)));
  const origPicks = picks.map((k) => time.frameMap[k] as number);
  // A few pictures each, found by seeking rather than by decoding the proxy and the reference whole.
  const size = { width: W, height: H, fps, signal: o.signal };
  // All at once: each is a short ffmpeg run that mostly waits on its seek and first frames.
  const grabbed = await Promise.all(picks.map((k, n) => Promise.all([sampled.proxyAt(k, size), lumaFrameAt(o.bins, reference, origPicks[n] as number, size)])));
  const pickPairs: Array<{ leak: Uint8Array; original: Uint8Array; i: number }> = [];
  for (const [n, [leakFrame, origFrame]] of grabbed.entries()) {
    if (leakFrame && origFrame) pickPairs.push({ leak: leakFrame, original: origFrame, i: origPicks[n] as number });
  }
  if (pickPairs.length === 0) throw new DrmError('INTERNAL_ERROR', 'no frame of the leak could be read back for its geometry');
  // Both sides are reduced the same way (area average), so a resampling difference cannot pass for a shift.
  const sw = Math.min(SEARCH_WIDTH, W);
  const sh = Math.max(2, Math.round((sw * H) / W));
  // The black bars, found on the proxies (the whole leak frame stretched to W × H), in proxy pixels.
  const activeP = activeArea(pickPairs.map((p) => p.leak), W, H);
  const active = { x: (activeP.x * leak.width) / W, y: (activeP.y * leak.height) / H, w: (activeP.w * leak.width) / W, h: (activeP.h * leak.height) / H };
  // The leak is compared at the original's search size: a tone curve fitted between a sharp leak
  // and an enlarged (blurred) original flattens contrast (measured: |z| fell by 40% against a
  // 160×90 reference).
  const aw = Math.min(SEARCH_WIDTH, W);
  const ah = Math.max(2, Math.round((aw * active.h) / active.w));
  const pairs = pickPairs.map((p) => ({
    leak: { data: resizeArea(p.leak, W, H, activeP, aw, ah), width: aw, height: ah },
    original: { data: resizeArea(p.original, W, H, { x: 0, y: 0, w: W, h: H }, sw, sh), width: sw, height: sh },
  }));
  const { rect, score: geometryScore } = findRect(pairs, W, H, active.h / active.w);
  // With the geometry known, leak samples are matched again against the original seen through the
  // rectangle: a crop no longer reads as motion, and a slow pan is followed frame by frame.
  time = refineTime(time, origThumbs.length, thumbScorer(leakThumbs, tw, lth, origThumbs, th, active, leak, W, rect));
  leakThumbs.length = 0;
  origThumbs.length = 0;
  const tone = toneCurve(pairs.map((p) => ({ leak: p.leak.data, original: viewThrough(p.original, W, rect, aw, ah) })));
  o.onProgress?.('align', 1, 2);

  // 3. Score sampled frames of every segment the leak holds.
  const perSegment = o.framesPerSegment ?? FRAMES_PER_SEGMENT;
  const bySegment = new Map<number, number[]>();
  const aligned = [...time.frameMap.keys()].filter((k) => (time.frameMap[k] as number) >= 0);
  for (const k of aligned) {
    const s = segmentAt((time.frameMap[k] as number) / fps);
    const ks = bySegment.get(s);
    if (ks) ks.push(k);
    else bySegment.set(s, [k]);
  }
  const chosen = new Set<number>();
  for (const ks of bySegment.values()) {
    const n = Math.min(perSegment, ks.length);
    for (let m = 0; m < n; m++) chosen.add(ks[Math.floor(((m + 0.5) * ks.length) / n)] as number);
  }
  o.onProgress?.('align', 2, 2);
  const placement: LeakPlacement = { active: activeP, rect, inside: insetRect(rect, 2, W, H), tone };
  const scores = await scoreSegments(o, { reference, leak: sampled, W, H, fps, params, chosen, frameMap: time.frameMap, placement });

  const count = patternLength(W, H, params);
  const segments: SegmentReading[] = [...scores.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, score]) => {
      const z = score.z(segmentPattern(o.key, o.contentId, index, count));
      const reading: SegmentReading = { index, z, bit: bitFromZ(z), coverage: seconds(bySegment.get(index) ?? []) };
      if (o.nullPatterns) reading.nullZ = nullPatterns(o.key, o.contentId, index, count, o.nullPatterns).map((p) => score.z(p));
      return reading;
    });
  const r = { x: Math.round(rect.x), y: Math.round(rect.y), w: Math.round(rect.w), h: Math.round(rect.h) };
  const a = { x: Math.round(active.x), y: Math.round(active.y), w: Math.round(active.w), h: Math.round(active.h) };
  return {
    segments,
    bits: readOut(segments),
    alignment: {
      offsetSeconds: time.offset / fps,
      timeCorrelation: round3(time.correlation),
      rect: `${r.w}x${r.h}+${r.x}+${r.y}`,
      geometryScore: round3(geometryScore),
      activeArea: `${a.w}x${a.h}+${a.x}+${a.y}`,
      // Counted on the samples: each stands for the leak's frames up to the next one.
      matchedFrames: Math.round(seconds(aligned) * fps),
      leakFrames: Math.round(seconds([...time.frameMap.keys()]) * fps),
    },
  };
}

const round3 = (v: number) => Math.round(v * 1000) / 1000;

/** The mean time between a leak's samples in seconds (0 with fewer than two). */
function meanGap(times: Float64Array): number {
  const n = times.length;
  return n < 2 ? 0 : (times[n - 1] as number) / (n - 1);
}

/** The seconds of the leak each sample stands for: up to the next sample (the last one, the mean gap or `alone`). */
function sampleSpans(times: Float64Array, alone: number): Float64Array {
  const n = times.length;
  const mean = n < 2 ? alone : meanGap(times);
  return Float64Array.from({ length: n }, (_, k) => (k + 1 < n ? (times[k + 1] as number) - (times[k] as number) : mean));
}

/**
 * refineTime's comparison: leak thumbnail k (its active area) against original thumbnail i seen
 * through the rectangle. Each side is resampled once and kept: a frame is compared with five
 * neighbours, and the offset search compares hundreds of frames nine times.
 */
function thumbScorer(leakThumbs: Uint8Array[], tw: number, lth: number, origThumbs: Uint8Array[], th: number, active: Rect, leak: VideoInfo, W: number, rect: Rect) {
  const tActive = { x: (active.x * tw) / leak.width, y: (active.y * lth) / leak.height, w: (active.w * tw) / leak.width, h: (active.h * lth) / leak.height };
  const vh = Math.max(2, Math.round((tw * active.h) / active.w));
  const leakPics = new Map<number, Float32Array>();
  const views = new Map<number, Float32Array>();
  const cached = (map: Map<number, Float32Array>, k: number, make: () => Float32Array) => {
    let v = map.get(k);
    if (!v) {
      // Frames are asked for in order, a few apart: older ones will not come back.
      if (map.size > 64) for (const old of map.keys()) if (old < k - 16) map.delete(old);
      v = make();
      map.set(k, v);
    }
    return v;
  };
  return (k: number, i: number) =>
    correlation(
      cached(leakPics, k, () => resizeArea(leakThumbs[k] as Uint8Array, tw, lth, tActive, tw, vh)),
      cached(views, i, () => viewThrough({ data: origThumbs[i] as Uint8Array, width: tw, height: th }, W, rect, tw, vh)),
    );
}

interface ScoringJob {
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

/** Reads the proxies and the reference once, in step, and scores each chosen frame against its original. */
async function scoreSegments(o: VideoDetectOptions, job: ScoringJob): Promise<Map<number, SegmentScore>> {
  const { W, H, fps, params, chosen, frameMap, placement } = job;
  const count = patternLength(W, H, params);
  const scores = new Map<number, SegmentScore>();
  // Only the frames scored come out of ffmpeg (the rest are decoded, not piped and converted).
  const samples = [...chosen].sort((a, b) => a - b);
  const needed = [...new Set(samples.map((k) => frameMap[k] as number))].sort((a, b) => a - b);
  const proxies = readAhead(job.leak.proxies(samples, { width: W, height: H, signal: o.signal }), READ_AHEAD);
  const originals = readAhead(preciseLumaFrames(o.bins, job.reference, { width: W, height: H, fps, select: needed, signal: o.signal }), READ_AHEAD)[Symbol.asyncIterator]();
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
  async function* pairsToScore() {
    let n = 0;
    for await (const proxy of proxies) {
      const i = frameMap[samples[n++] as number] as number;
      const original = await originalFrame(i);
      yield { i, leak: restoreLeak(proxy, original, W, H, placement), original };
    }
  }
  const transforms = async (p: { i: number; leak: Float32Array; original: Float32Array }) => {
    const [ot, st] = await Promise.all([analyse(o.backend, p.original, W, H, params), analyse(o.backend, p.leak, W, H, params)]);
    return { i: p.i, ot, st };
  };
  let done = 0;
  try {
    for await (const { i, ot, st } of inOrder(pairsToScore(), transforms, SCORING_WINDOW)) {
      const s = segmentAt(i / fps);
      let score = scores.get(s);
      if (!score) {
        score = new SegmentScore(count, params);
        scores.set(s, score);
      }
      score.addFrame(ot as Transform, st as Transform);
      // Originals before this one are no longer needed (matches move forward).
      for (const k of held.keys()) if (k < i - 8) held.delete(k);
      o.onProgress?.('score', ++done, chosen.size);
    }
  } finally {
    await originals.return?.(undefined);
  }
  o.signal?.throwIfAborted();
  return scores;
}
