import fs from 'node:fs';
import os from 'node:os';
import { DrmError } from '../../errors.js';
import { lumaFrames } from '../../media/video-frames.js';
import { activeArea, alignTime, centralRegion, framePositions, signature, type TimeAlignment } from './align.js';
import { realignPieces } from './align-pieces.js';
import { flipped, MIRRORS, type Mirror, mirroredSamples } from './mirror.js';
import type { VideoDetectOptions, VideoInfo } from './detect-options.js';
import { type LeakSamples, sampleLeak } from './leak-samples.js';
import type { CropWindow } from './crop-window.js';
import { leakWindows, placeFilmWindow } from './leak-windows.js';
import type { Rect } from './geometry.js';
import { THUMB_WIDTH, thumbSize, thumbsBeside } from './reference.js';

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
  /** the picture the samples show: the leak's whole frame, or the window the film was found in (./film-window.ts) */
  shown: VideoInfo;
  /** that window, in the leak's pixels (before any mirroring is undone) */
  window?: Rect;
  /** the window of the original (reference plane pixels) a heavily cropped leak was lined up on (./crop-window.ts) */
  shows?: Rect;
}

/**
 * Stage 1 of detection: the one decode of the leak, into thumbnails and proxies of about every
 * PROXY_EVERY-th frame (the leak's samples), and the time offset that lines those thumbnails up
 * with the reference's. The reference's thumbnails, of every frame, were written at ingest
 * (content from before that has them made from the reference). One alignment per orientation the
 * pictures leave plausible (./mirror.ts), the best lined up first: which one carries the mark is for
 * the segments to say. Where the film fills only a window of the leak's frame, the leak is decoded a
 * second time through that window; where the leak shows only a window of the film, it is lined up
 * against that window (./leak-windows.ts). Their readings compete with the others.
 */
export async function alignLeakInTime(
  o: VideoDetectOptions,
  reference: string,
  work: string,
  orig: VideoInfo,
  leak: VideoInfo,
): Promise<{ readings: TimedLeak[]; seconds: LineUpSeconds }> {
  const lap = stopwatch();
  const { width: W, height: H, fps } = orig;
  const { width: tw, height: th } = thumbSize(W, H);
  const thumbs = thumbsBeside(reference);
  const [origThumbs, first] = await Promise.all([
    collect(
      lumaFrames(o.bins, fs.existsSync(thumbs) ? thumbs : reference, { width: tw, height: th, fps, signal: o.signal }),
    ),
    sampleShown(o, work, orig, leak),
  ]);
  const decode = lap();
  const origSigs = origThumbs.map((f) => signature(f, tw, centralRegion({ x: 0, y: 0, w: tw, h: th })));
  const reference_ = { origThumbs, origSigs, tw, th };
  const whole = MIRRORS.map((mirror) => readingOf(first, reference_, fps, mirror));
  let lineUp = lap();
  const { thumbs: leakThumbs, times } = first.sampled;
  const windows = leakWindows({ thumbs: leakThumbs, thumbHeight: first.thumbHeight, times, ...reference_, fps });
  const sizes = { orig, leak, thumb: { width: tw, height: first.thumbHeight } };
  const film = windows.film && (await placeFilmWindow(o, reference, first.sampled, windows.film, sizes));
  const windowSearch = lap();
  const framed = film && (await sampleShown(o, work, orig, leak, film, first.skipNonReference));
  const windowDecode = framed ? lap() : undefined;
  const all = [
    ...whole,
    ...(framed ? MIRRORS.map((mirror) => readingOf(framed, reference_, fps, mirror)) : []),
    ...(windows.crop ? [cropReading(first, reference_, fps, orig, windows.crop)] : []),
  ];
  const readings = plausible(all).map(({ leakSigs, origSigs: sigs, ...timed }) => ({
    ...timed,
    time: realignPieces(timed.time, leakSigs, sigs),
  }));
  lineUp += lap();
  return { readings, seconds: { decode, lineUp, windowSearch, ...(windowDecode !== undefined && { windowDecode }) } };
}

/**
 * What stage 1 spent, in seconds: the decode (with the reference's thumbnails), lining the
 * orientations and readings up (pieces included), the window searches, and the second decode
 * through a film window where one was read.
 */
export interface LineUpSeconds {
  decode: number;
  lineUp: number;
  windowSearch: number;
  windowDecode?: number;
}

/** Seconds since the last call (or since it was made). */
export function stopwatch(): () => number {
  let last = performance.now();
  return () => {
    const now = performance.now();
    const seconds = (now - last) / 1000;
    last = now;
    return seconds;
  };
}

/** The reference's side of stage 1: its thumbnails (tw × th) and their central signatures. */
interface ReferenceThumbs {
  origThumbs: Uint8Array[];
  origSigs: Float32Array[];
  tw: number;
  th: number;
}

/** A leak's samples of the picture it shows (its whole frame, or a window of it), with their thumbnails' height. */
interface ShownSamples {
  sampled: LeakSamples;
  shown: VideoInfo;
  window?: Rect;
  thumbHeight: number;
  skipNonReference: boolean;
}

/**
 * The leak decoded into samples, of its whole frame or of `window` (leak pixels). The unreferenced
 * frames are skipped unless that leaves the samples too sparse (or `skip` says the first decode was).
 */
async function sampleShown(
  o: VideoDetectOptions,
  work: string,
  orig: VideoInfo,
  leak: VideoInfo,
  window?: Rect,
  skip?: boolean,
): Promise<ShownSamples> {
  const { width: W, height: H, fps } = orig;
  const shown = window ? { ...leak, width: window.w, height: window.h } : leak;
  // The leak's thumbnails keep the aspect of what they show (the whole leak frame, black bars and all).
  const lth = thumbSize(shown.width, shown.height).height;
  const expected = Math.max(1, Math.round((leak.duration * fps) / PROXY_EVERY));
  o.onProgress?.('decode', 0, expected);
  const sample = (skipNonReference: boolean) =>
    sampleLeak(o.bins, o.leak, {
      duration: leak.duration,
      parts: Math.min(MAX_PARTS, os.availableParallelism()),
      dir: work,
      ...(window && { name: 'window', crop: window }),
      fps,
      spacing: (PROXY_EVERY - 0.5) / fps,
      skipNonReference,
      thumb: { width: THUMB_WIDTH, height: lth },
      proxy: { width: W, height: H },
      signal: o.signal,
      onSample: (n) => {
        if (n % 25 === 0) o.onProgress?.('decode', n, Math.max(n, expected));
      },
    });
  let skipNonReference = skip ?? true;
  let sampled = await sample(skipNonReference);
  if (skip === undefined && meanGap(sampled.times) * fps > SPARSEST_SAMPLING) {
    skipNonReference = false;
    sampled = await sample(false);
  }
  if (sampled.thumbs.length === 0) throw new DrmError('BAD_REQUEST', `the leak ${o.leak} has no video frames`);
  o.onProgress?.('decode', sampled.thumbs.length, sampled.thumbs.length);
  return { sampled, shown, ...(window && { window }), thumbHeight: lth, skipNonReference };
}

/** A reading before its pieces are placed on their own (./align-pieces.ts), which only the plausible ones are. */
type Oriented = TimedLeak & { leakSigs: Float32Array[]; origSigs: readonly Float32Array[] };

/**
 * The samples seen in one orientation, lined up against the reference as a whole: their active
 * picture's central half against the original's, or (`crop`) against the central half of the
 * window of the original a cropped leak shows (./crop-window.ts; `plane` is that window in reference plane pixels).
 */
function readingOf(
  s: ShownSamples,
  ref: ReferenceThumbs,
  fps: number,
  mirror: Mirror,
  crop?: { origSigs: readonly Float32Array[]; plane: Rect },
): Oriented {
  const { sampled, thumbHeight: lth } = s;
  const { tw, th, origThumbs } = ref;
  const origSigs = crop?.origSigs ?? ref.origSigs;
  const positions = framePositions(sampled.times, fps);
  const spans = sampleSpans(sampled.times, PROXY_EVERY / fps);
  const seen = sampled.thumbs.map((t) => flipped(t, tw, lth, mirror));
  const active = activeArea(seen, tw, lth);
  const leakSigs = seen.map((f) => signature(f, tw, centralRegion(active)));
  return {
    sampled: mirroredSamples(sampled, mirror, { width: tw, height: lth }),
    origThumbs,
    thumb: { width: tw, height: th, leakHeight: lth },
    time: alignTime(leakSigs, origSigs, positions),
    leakSigs,
    origSigs,
    seconds: (ks) => ks.reduce((sum, k) => sum + (spans[k] as number), 0),
    mirror,
    shown: s.shown,
    ...(s.window && { window: s.window }),
    ...(crop && { shows: crop.plane }),
  };
}

/** The reading of a heavily cropped leak: lined up against the window of the original it shows, in its orientation. */
function cropReading(first: ShownSamples, ref: ReferenceThumbs, fps: number, orig: VideoInfo, crop: CropWindow) {
  const { tw, th, origThumbs } = ref;
  const { rect: shows, mirror } = crop;
  const region = centralRegion(shows);
  const windowSigs = origThumbs.map((f) => signature(f, tw, region));
  const [sx, sy] = [orig.width / tw, orig.height / th];
  const plane = { x: shows.x * sx, y: shows.y * sy, w: shows.w * sx, h: shows.h * sy };
  return readingOf(first, ref, fps, mirror, { origSigs: windowSigs, plane });
}

/**
 * A reading is plausible when its pictures line up within this much of the best one's
 * correlation. Pictures decide little between orientations of footage that looks alike mirrored
 * (sky, water, a smooth pan): the mark then decides, read both ways.
 */
const PLAUSIBLE_WITHIN = 0.15;

/** At most this many readings are scored: each costs a placement and a scoring pass. */
export const MOST_ORIENTATIONS = 2;

/**
 * The readings that may line up with the original, best first (at most MOST_ORIENTATIONS). A copy
 * mirrored or not, framed or not, lines up far better one way on most footage, and costs one reading.
 */
function plausible(all: Oriented[]): Oriented[] {
  const sorted = [...all].sort((a, b) => b.time.correlation - a.time.correlation);
  const best = (sorted[0] as Oriented).time.correlation;
  return sorted.filter((t) => t.time.correlation >= best - PLAUSIBLE_WITHIN).slice(0, MOST_ORIENTATIONS);
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
