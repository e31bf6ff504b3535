import os from 'node:os';
import type { DtcwtBackend, Transform } from '../../gpu/backend.js';
import { DrmError } from '../errors.js';
import type { MediaBinaries } from '../media/binaries.js';
import { lumaFrames, preciseLumaFrames } from '../media/decode.js';
import { type MediaInfo, probeMedia } from '../media/probe.js';
import { bitFromZ } from './score.js';
import { type Detection, readOut, type SegmentReading, segmentAt } from './segments.js';
import { inOrder } from './in-order.js';
import { referenceParams } from './reference.js';
import { activeArea, alignTime, centralRegion, refineTime, signature, toneCurve } from './video-align.js';
import { findRect, type Picture, type Rect, rectScore, resizeArea, viewThrough } from './video-geometry.js';
import { analyse, DEFAULT_VIDEO_MARK, patternLength, segmentPattern, type VideoMarkParams } from './video-mark.js';
import { SegmentScore } from './video-score.js';

export interface VideoDetectOptions {
  bins: MediaBinaries;
  key: Buffer;
  contentId: string;
  leak: string;
  /** the unmarked original, or the reduced reference ingest kept (with `reference`) */
  original: string;
  /** `original` is a reference plane (./reference.ts): already reduced by the mark's scale */
  reference?: boolean;
  backend: DtcwtBackend;
  params?: VideoMarkParams;
  /** frames scored per segment, evenly spread over what the leak holds of it (default 30) */
  framesPerSegment?: number;
  onProgress?: (stage: 'align' | 'score', done: number, total: number) => void;
  signal?: AbortSignal;
}

const THUMB_WIDTH = 96;
const SEARCH_WIDTH = 320;
const SEARCH_FRAMES = 6;

const even = (n: number) => Math.max(2, 2 * Math.round(n / 2));

async function collect(gen: AsyncGenerator<Uint8Array>): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for await (const f of gen) out.push(f);
  return out;
}

async function videoOf(bins: MediaBinaries, file: string, role: string): Promise<NonNullable<MediaInfo['video']> & { duration: number }> {
  const info = await probeMedia(bins, file);
  if (!info.video) throw new DrmError('BAD_REQUEST', `the ${role} ${file} has no video stream`);
  return { ...info.video, duration: info.duration };
}

/**
 * Reads the mark of every segment a leak holds, with its original at hand (DESIGN.md: detection is
 * not blind). Aligns the leak in time and space (./video-align.ts, ./video-geometry.ts), undoes its
 * tone curve, puts each sampled leak frame back into the original's geometry (what the leak does
 * not show is filled from the original, so it scores nothing), and scores each segment.
 */
export async function detectVideo(o: VideoDetectOptions): Promise<Detection> {
  // On a reference plane the reduction is done: the leak is brought to the plane's size instead.
  const params = o.reference ? referenceParams(o.params) : (o.params ?? DEFAULT_VIDEO_MARK);
  const [orig, leak] = await Promise.all([videoOf(o.bins, o.original, 'original'), videoOf(o.bins, o.leak, 'leak')]);
  const { width: W, height: H, fps } = orig;

  // 1. Thumbnails of every frame, both at the original's frame rate.
  o.onProgress?.('align', 0, 3);
  const tw = THUMB_WIDTH;
  const th = even((tw * H) / W);
  const lth = even((tw * leak.height) / leak.width);
  const [origThumbs, leakThumbs] = await Promise.all([
    collect(lumaFrames(o.bins, o.original, { width: tw, height: th, fps, signal: o.signal })),
    collect(lumaFrames(o.bins, o.leak, { width: tw, height: lth, fps, signal: o.signal })),
  ]);
  if (leakThumbs.length === 0) throw new DrmError('BAD_REQUEST', `the leak ${o.leak} has no video frames`);
  const thumbActive = activeArea(leakThumbs.filter((_, i) => i % 5 === 0), tw, lth);
  const origSigs = origThumbs.map((f) => signature(f, tw, centralRegion({ x: 0, y: 0, w: tw, h: th })));
  const leakSigs = leakThumbs.map((f) => signature(f, tw, centralRegion(thumbActive)));
  let time = alignTime(leakSigs, origSigs);

  // 2. Geometry and tone from a few matched frames at full size.
  o.onProgress?.('align', 1, 3);
  const matched = [...time.frameMap.keys()].filter((j) => (time.frameMap[j] as number) >= 0);
  if (matched.length === 0) throw new DrmError('BAD_REQUEST', `the leak ${o.leak} shows nothing of the original ${o.original}`);
  const picks = Array.from(new Set(Array.from({ length: SEARCH_FRAMES }, (_, k) => matched[Math.floor(((k + 0.5) * matched.length) / SEARCH_FRAMES)] as number)));
  const origPicks = picks.map((j) => time.frameMap[j] as number);
  const origSelect = [...new Set(origPicks)].sort((a, b) => a - b);
  const [leakFull, origFull] = await Promise.all([
    collect(lumaFrames(o.bins, o.leak, { width: leak.width, height: leak.height, fps, select: picks, signal: o.signal })),
    collect(lumaFrames(o.bins, o.original, { width: W, height: H, fps, select: origSelect, signal: o.signal })),
  ]);
  // Both sides are reduced the same way (area average), so a resampling difference cannot pass for a shift.
  const sw = Math.min(SEARCH_WIDTH, W);
  const sh = Math.max(2, Math.round((sw * H) / W));
  const origByIndex = new Map(origSelect.map((i, k) => [i, origFull[k] && resizeArea(origFull[k], W, H, { x: 0, y: 0, w: W, h: H }, sw, sh)]));
  const active = activeArea(leakFull, leak.width, leak.height);
  // The leak is compared at the original's search size: a tone curve fitted between a sharp leak
  // and an enlarged (blurred) original flattens contrast (measured: |z| fell by 40% against a
  // 160×90 reference).
  const aw = Math.min(SEARCH_WIDTH, W);
  const ah = Math.max(2, Math.round((aw * active.h) / active.w));
  const pairs: Array<{ leak: Picture; original: Picture }> = [];
  leakFull.forEach((f, k) => {
    const original = origByIndex.get(origPicks[k] as number);
    if (original) pairs.push({ leak: { data: resizeArea(f, leak.width, leak.height, active, aw, ah), width: aw, height: ah }, original: { data: original, width: sw, height: sh } });
  });
  const { rect, score: geometryScore } = findRect(pairs, W, H, active.h / active.w);
  // With the geometry known, leak frames are matched again against the original seen through the
  // rectangle: a crop no longer reads as motion, and a slow pan is followed frame by frame.
  const tActive = { x: (active.x * tw) / leak.width, y: (active.y * lth) / leak.height, w: (active.w * tw) / leak.width, h: (active.h * lth) / leak.height };
  const vw = tw;
  const vh = Math.max(2, Math.round((vw * active.h) / active.w));
  const leakPics = new Map<number, Picture>();
  const leakPic = (j: number) => {
    let p = leakPics.get(j);
    if (!p) {
      p = { data: resizeArea(leakThumbs[j] as Uint8Array, tw, lth, tActive, vw, vh), width: vw, height: vh };
      leakPics.set(j, p);
    }
    return p;
  };
  time = refineTime(time, origThumbs.length, (j, i) => rectScore([{ leak: leakPic(j), original: { data: origThumbs[i] as Uint8Array, width: tw, height: th } }], W, rect, 1));
  leakPics.clear();
  leakThumbs.length = 0;
  origThumbs.length = 0;
  const tone = toneCurve(pairs.map((p) => ({ leak: p.leak.data, original: viewThrough(p.original, W, rect, aw, ah) })));

  // 3. Score sampled frames of every segment the leak holds.
  o.onProgress?.('align', 2, 3);
  const perSegment = o.framesPerSegment ?? 30;
  const bySegment = new Map<number, number[]>();
  const aligned = [...time.frameMap.keys()].filter((j) => (time.frameMap[j] as number) >= 0);
  for (const j of aligned) {
    const s = segmentAt((time.frameMap[j] as number) / fps);
    const js = bySegment.get(s);
    if (js) js.push(j);
    else bySegment.set(s, [j]);
  }
  const chosen = new Set<number>();
  for (const js of bySegment.values()) {
    const n = Math.min(perSegment, js.length);
    for (let k = 0; k < n; k++) chosen.add(js[Math.floor(((k + 0.5) * js.length) / n)] as number);
  }
  const count = patternLength(W, H, params);
  const scores = new Map<number, SegmentScore>();
  const r = { x: Math.round(rect.x), y: Math.round(rect.y), w: Math.round(rect.w), h: Math.round(rect.h) };
  const inside = insetRect(r, 2, W, H);
  const geometry = [o.reference ? 'format=gray16le' : 'format=gray', `crop=${active.w}:${active.h}:${active.x}:${active.y}`, `scale=${r.w}:${r.h}:flags=bicubic`, `pad=${W}:${H}:${r.x}:${r.y}`];

  // A reference plane is small: its fractions of a grey level, and the leak's, are kept.
  const frames = o.reference ? preciseLumaFrames : lumaFrames;
  const leakFrames = frames(o.bins, o.leak, { width: W, height: H, fps, geometry, signal: o.signal });
  const originals = frames(o.bins, o.original, { width: W, height: H, fps, signal: o.signal })[Symbol.asyncIterator]();
  let nextOriginal = 0;
  const held = new Map<number, Uint8Array | Float32Array>();
  const needed = new Set([...chosen].map((j) => time.frameMap[j] as number));
  const originalFrame = async (i: number): Promise<Uint8Array | Float32Array> => {
    while (!held.has(i)) {
      const next = await originals.next();
      if (next.done) throw new DrmError('INTERNAL_ERROR', `original frame ${i} was not decoded`);
      if (needed.has(nextOriginal)) held.set(nextOriginal, next.value);
      nextOriginal++;
    }
    return held.get(i) as Uint8Array | Float32Array;
  };
  async function* pairsToScore() {
    let j = 0;
    for await (const frame of leakFrames) {
      if (chosen.has(j)) {
        const i = time.frameMap[j] as number;
        const original = await originalFrame(i);
        yield { i, leak: restore(frame, original, inside, tone, W), original };
      }
      j++;
    }
  }
  const transforms = async (p: { i: number; leak: Uint8Array | Float32Array; original: Uint8Array | Float32Array }) => {
    const [ot, st] = await Promise.all([analyse(o.backend, p.original, W, H, params), analyse(o.backend, p.leak, W, H, params)]);
    return { i: p.i, ot, st };
  };
  let done = 0;
  try {
    for await (const { i, ot, st } of inOrder(pairsToScore(), transforms, Math.max(2, os.availableParallelism()))) {
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

  const segments: SegmentReading[] = [...scores.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, score]) => {
      const z = score.z(segmentPattern(o.key, o.contentId, index, count));
      return { index, z, bit: bitFromZ(z), coverage: (bySegment.get(index)?.length ?? 0) / fps };
    });
  return {
    segments,
    bits: readOut(segments),
    alignment: {
      offsetSeconds: time.offset / fps,
      timeCorrelation: round3(time.correlation),
      rect: `${r.w}x${r.h}+${r.x}+${r.y}`,
      geometryScore: round3(geometryScore),
      activeArea: `${active.w}x${active.h}+${active.x}+${active.y}`,
      matchedFrames: aligned.length,
      leakFrames: time.frameMap.length,
    },
  };
}

const round3 = (v: number) => Math.round(v * 1000) / 1000;

function insetRect(r: Rect, by: number, width: number, height: number): Rect {
  const x = Math.max(0, r.x + by);
  const y = Math.max(0, r.y + by);
  return { x, y, w: Math.min(width, r.x + r.w - by) - x, h: Math.min(height, r.y + r.h - by) - y };
}

/** The leak frame in the original's tones, with what it does not show taken from the original. */
function restore(leak: Uint8Array | Float32Array, original: Uint8Array | Float32Array, inside: Rect, tone: Uint8Array, width: number): Uint8Array | Float32Array {
  if (leak instanceof Float32Array) {
    const out = Float32Array.from(original);
    for (let y = inside.y; y < inside.y + inside.h; y++) {
      const row = y * width;
      for (let x = inside.x; x < inside.x + inside.w; x++) {
        // The tone curve between its whole-level entries, so the fraction survives it.
        const v = leak[row + x] as number;
        const k = Math.min(254, Math.floor(v));
        const lo = tone[k] as number;
        out[row + x] = lo + ((tone[k + 1] as number) - lo) * (v - k);
      }
    }
    return out;
  }
  const out = Uint8Array.from(original);
  for (let y = inside.y; y < inside.y + inside.h; y++) {
    const row = y * width;
    for (let x = inside.x; x < inside.x + inside.w; x++) out[row + x] = tone[leak[row + x] as number] as number;
  }
  return out;
}
