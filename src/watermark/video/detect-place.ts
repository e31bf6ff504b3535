import { DrmError } from '../../errors.js';
import { lumaFrameAt } from '../../media/video-frames.js';
import { activeArea, refineTime, type TimeAlignment, toneCurve } from './align.js';
import type { VideoDetectOptions, VideoInfo } from './detect-options.js';
import type { TimedLeak } from './detect-time.js';
import { findRect } from './find-rect.js';
import { correlation, type Rect, resizeArea, viewThrough } from './geometry.js';

const SEARCH_WIDTH = 320;
const SEARCH_FRAMES = 6;

/** Where the leak's picture sits in the original's, and how its tones were changed. */
export interface PlacedLeak {
  /** the time alignment, refined frame by frame once the geometry is known */
  time: TimeAlignment;
  /** the rectangle of the original (reference plane pixels) that the leak shows */
  rect: Rect;
  geometryScore: number;
  /** the leak's picture without its black bars: in leak pixels, and in proxy pixels */
  active: Rect;
  activeP: Rect;
  tone: Uint8Array;
}

interface PicturePair {
  leak: Uint8Array;
  original: Uint8Array;
}

/**
 * A few matched samples (k: proxy frame k) and their original frames, found by seeking rather
 * than by decoding the proxy and the reference whole. All at once: each is a short ffmpeg run
 * that mostly waits on its seek and first frames.
 */
async function matchedPictures(o: VideoDetectOptions, reference: string, timed: TimedLeak, orig: VideoInfo): Promise<PicturePair[]> {
  const { time, sampled } = timed;
  const matched = [...time.frameMap.keys()].filter((k) => (time.frameMap[k] as number) >= 0);
  if (matched.length === 0) throw new DrmError('BAD_REQUEST', `the leak ${o.leak} shows nothing of the original`);
  const picks = Array.from(new Set(Array.from({ length: SEARCH_FRAMES }, (_, k) => matched[Math.floor(((k + 0.5) * matched.length) / SEARCH_FRAMES)] as number)));
  const origPicks = picks.map((k) => time.frameMap[k] as number);
  const size = { width: orig.width, height: orig.height, fps: orig.fps, signal: o.signal };
  const grabbed = await Promise.all(picks.map((k, n) => Promise.all([sampled.proxyAt(k, size), lumaFrameAt(o.bins, reference, origPicks[n] as number, size)])));
  const pairs: PicturePair[] = [];
  for (const [leakFrame, origFrame] of grabbed) if (leakFrame && origFrame) pairs.push({ leak: leakFrame, original: origFrame });
  if (pairs.length === 0) throw new DrmError('INTERNAL_ERROR', 'no frame of the leak could be read back for its geometry');
  return pairs;
}

/**
 * Stage 2 of detection: the geometry (black bars, then the rectangle of the original the leak
 * shows) and the tone curve, from a few matched samples; then the time alignment again, against
 * the original seen through that rectangle. The thumbnails are let go afterwards.
 */
export async function placeLeak(o: VideoDetectOptions, reference: string, timed: TimedLeak, orig: VideoInfo, leak: VideoInfo): Promise<PlacedLeak> {
  const { width: W, height: H } = orig;
  const pickPairs = await matchedPictures(o, reference, timed, orig);
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
  const time = refineTime(timed.time, timed.origThumbs.length, thumbScorer(timed, active, leak, W, rect));
  timed.sampled.thumbs.length = 0;
  timed.origThumbs.length = 0;
  const tone = toneCurve(pairs.map((p) => ({ leak: p.leak.data, original: viewThrough(p.original, W, rect, aw, ah) })));
  return { time, rect, geometryScore, active, activeP, tone };
}

/**
 * refineTime's comparison: leak thumbnail k (its active area) against original thumbnail i seen
 * through the rectangle. Each side is resampled once and kept: a frame is compared with five
 * neighbours, and the offset search compares hundreds of frames nine times.
 */
function thumbScorer(timed: TimedLeak, active: Rect, leak: VideoInfo, W: number, rect: Rect) {
  const { width: tw, height: th, leakHeight: lth } = timed.thumb;
  const leakThumbs = timed.sampled.thumbs;
  const origThumbs = timed.origThumbs;
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
