import { DrmError } from '../../errors.js';
import { lumaFrameAt } from '../../media/video-frames.js';
import { activeArea, alignTime, centralRegion, refineTime, signature, type TimeAlignment, toneCurve } from './align.js';
import { realignPieces } from './align-pieces.js';
import type { VideoDetectOptions, VideoInfo } from './detect-options.js';
import type { TimedLeak } from './detect-time.js';
import type { LeakSamples } from './leak-samples.js';
import { findRect } from './find-rect.js';
import { type FramePairs, fitHomography } from './fit-homography.js';
import { correlation, type Rect, resizeArea } from './geometry.js';
import { compose, corners, type Homography, invert, rectOnto, scaleShift, warpedView } from './homography.js';

const SEARCH_WIDTH = 320;
const SEARCH_FRAMES = 6;

/** Where the leak's picture sits in the original's, and how its tones were changed. */
export interface PlacedLeak {
  /** the time alignment, refined frame by frame once the geometry is known */
  time: TimeAlignment;
  /**
   * the rectangle of the original (reference plane pixels) that the leak shows: its bounds where the map is projective
   */
  rect: Rect;
  /** where each reference plane point is in the leak's proxy */
  map: Homography;
  /** whether the leak was turned, tilted or filmed (a projective map fitted), not only cropped and scaled */
  projective: boolean;
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
async function matchedPictures(
  o: VideoDetectOptions,
  reference: string,
  sampled: LeakSamples,
  time: TimeAlignment,
  orig: VideoInfo,
): Promise<PicturePair[]> {
  const matched = [...time.frameMap.keys()].filter((k) => (time.frameMap[k] as number) >= 0);
  if (matched.length === 0) throw new DrmError('BAD_REQUEST', `the leak ${o.leak} shows nothing of the original`);
  const picks = Array.from(
    new Set(
      Array.from(
        { length: SEARCH_FRAMES },
        (_, k) => matched[Math.floor(((k + 0.5) * matched.length) / SEARCH_FRAMES)] as number,
      ),
    ),
  );
  const origPicks = picks.map((k) => time.frameMap[k] as number);
  const size = { width: orig.width, height: orig.height, fps: orig.fps, signal: o.signal };
  const grabbed = await Promise.all(
    picks.map((k, n) =>
      Promise.all([sampled.proxyAt(k, size), lumaFrameAt(o.bins, reference, origPicks[n] as number, size)]),
    ),
  );
  const pairs: PicturePair[] = [];
  for (const [leakFrame, origFrame] of grabbed)
    if (leakFrame && origFrame) pairs.push({ leak: leakFrame, original: origFrame });
  if (pairs.length === 0)
    throw new DrmError('INTERNAL_ERROR', 'no frame of the leak could be read back for its geometry');
  return pairs;
}

/** The geometry found on one set of matched pictures, at the search size. */
interface Geometry {
  /** the leak's picture without black bars, in leak pixels and in proxy pixels */
  active: Rect;
  activeP: Rect;
  /** the search sizes: the original's (sw × sh) and the leak's active picture's (aw × ah) */
  size: { sw: number; sh: number; aw: number; ah: number };
  pairs: FramePairs;
  found: { rect: Rect; score: number };
  /** original search pixel to leak search pixel */
  searchMap: { map: Homography; start: Homography; score: number };
}

async function geometryAt(
  o: VideoDetectOptions,
  reference: string,
  timed: TimedLeak,
  time: TimeAlignment,
  orig: VideoInfo,
  leak: VideoInfo,
): Promise<Geometry> {
  const { width: W, height: H } = orig;
  const pickPairs = await matchedPictures(o, reference, timed.sampled, time, orig);
  // Both sides are reduced the same way (area average), so a resampling difference cannot pass for a shift.
  const sw = Math.min(SEARCH_WIDTH, W);
  const sh = Math.max(2, Math.round((sw * H) / W));
  // The black bars, found on the proxies (the whole leak frame stretched to W × H), in proxy pixels.
  const activeP = activeArea(
    pickPairs.map((p) => p.leak),
    W,
    H,
  );
  const active = {
    x: (activeP.x * leak.width) / W,
    y: (activeP.y * leak.height) / H,
    w: (activeP.w * leak.width) / W,
    h: (activeP.h * leak.height) / H,
  };
  // The leak is compared at the original's search size: a tone curve fitted between a sharp leak
  // and an enlarged (blurred) original flattens contrast (measured: |z| fell by 40% against a
  // 160×90 reference).
  const aw = Math.min(SEARCH_WIDTH, W);
  const ah = Math.max(2, Math.round((aw * active.h) / active.w));
  const pairs = pickPairs.map((p) => ({
    leak: { data: resizeArea(p.leak, W, H, activeP, aw, ah), width: aw, height: ah },
    original: { data: resizeArea(p.original, W, H, { x: 0, y: 0, w: W, h: H }, sw, sh), width: sw, height: sh },
  }));
  // A heavy crop's window, found on the thumbnails (./crop-window.ts), is searched around; others from 80% up.
  const { shows } = timed;
  const found = shows
    ? findRect(pairs, W, H, active.h / active.w, Math.max(0.2, shows.w / W - 0.1), { near: shows })
    : findRect(pairs, W, H, active.h / active.w);
  const searchMap = projectiveIfBetter(
    pairs,
    rectOnto(scaled(found.rect, sw / W, sh / H), { x: 0, y: 0, w: aw, h: ah }),
    found.score,
  );
  return { active, activeP, size: { sw, sh, aw, ah }, pairs, found, searchMap };
}

/**
 * Below this geometry score the time alignment is made again with the original seen through the
 * map found: an off-centre crop or a tilt makes the central signatures of ./align.ts match frames
 * a second off where the picture pans (a shift in place passes for a shift in time), and those
 * frames then mislead the geometry.
 */
const RETIME_BELOW = 0.97;
/** Each round is a geometry search and a realignment (a second or two); a 10% off-centre crop of a pan took three. */
const RETIME_ROUNDS = 4;

/** The alignment of stage 1 made again (./detect-time.ts), on signatures of the original seen through the geometry. */
function realignThroughMap(timed: TimedLeak, views: ThumbViews): TimeAlignment {
  const region = centralRegion({ x: 0, y: 0, w: views.width, h: views.height });
  const leakSigs = timed.sampled.thumbs.map((_, k) => signature(views.leak(k), views.width, region));
  const origSigs = timed.origThumbs.map((_, i) => signature(views.original(i), views.width, region));
  return realignPieces(alignTime(leakSigs, origSigs, timed.time.positions), leakSigs, origSigs);
}

/**
 * Stage 2 of detection: the geometry (black bars, then the rectangle or projective map of the
 * original the leak shows) and the tone curve, from a few matched samples; then the time
 * alignment again, against the original seen through that map (and, where the geometry matched
 * poorly, the geometry again at the time so found). The caller lets the thumbnails go once no reading needs them.
 */
export async function placeLeak(
  o: VideoDetectOptions,
  reference: string,
  timed: TimedLeak,
  orig: VideoInfo,
  leak: VideoInfo,
): Promise<PlacedLeak> {
  const { width: W, height: H } = orig;
  let geometry = await geometryAt(o, reference, timed, timed.time, orig, leak);
  let coarse = timed.time;
  for (let round = 0; round < RETIME_ROUNDS && geometry.searchMap.score < RETIME_BELOW; round++) {
    // Lined up again from the start with both sides seen alike, then the geometry found again on frames that match.
    const views = thumbViews(timed, leak, geometry);
    const realigned = refineTime(realignThroughMap(timed, views), timed.origThumbs.length, scorer(views));
    const again = await geometryAt(o, reference, timed, realigned, orig, leak);
    if (again.searchMap.score <= geometry.searchMap.score + 0.001) break;
    [geometry, coarse] = [again, realigned];
  }
  const time = refineTime(coarse, timed.origThumbs.length, scorer(thumbViews(timed, leak, geometry)));
  const { active, activeP, pairs, found, searchMap } = geometry;
  const { sw, sh, aw, ah } = geometry.size;
  const map = compose(
    scaleShift(activeP.w / aw, activeP.h / ah, activeP.x, activeP.y),
    compose(searchMap.map, scaleShift(sw / W, sh / H, 0, 0)),
  );
  // Only where the leak shows the original well inside its edge: next to the black that fills a
  // turned leak's corners the leak's values are dark mixtures, and where a film has few dark
  // pixels of its own they would bend the curve's dark end (measured: a 2° turn read |z| 2–4 with
  // them, 6–10 without).
  const tone = toneCurve(
    pairs.map((p) => ({ leak: p.leak.data, original: warpedView(p.original, invert(searchMap.map), aw, ah, 2) })),
  );
  const projective = searchMap.map !== searchMap.start;
  const rect = projective ? shownBounds(map, activeP, W, H) : found.rect;
  return { time, rect, map, projective, geometryScore: searchMap.score, active, activeP, tone };
}

/** How much better (in mean correlation) a projective fit must match than the rectangle to be taken. */
const PROJECTIVE_GAIN = 0.002;
/** A rectangle matching this well is the answer (a re-encoded or cropped leak): no projective fit is tried. */
const RECT_IS_ENOUGH = 0.995;

/**
 * A leak that was turned, tilted or filmed matches no rectangle well: the projective map fitted
 * from the rectangle (./fit-homography.ts) is taken when it matches clearly better.
 */
function projectiveIfBetter(pairs: FramePairs, start: Homography, startScore: number) {
  if (startScore >= RECT_IS_ENOUGH) return { map: start, start, score: startScore };
  const fit = fitHomography(pairs, start);
  return fit.score > startScore + PROJECTIVE_GAIN ? { ...fit, start } : { map: start, start, score: startScore };
}

const scaled = (r: Rect, sx: number, sy: number): Rect => ({ x: r.x * sx, y: r.y * sy, w: r.w * sx, h: r.h * sy });

/** The bounding box (reference plane pixels, within the plane) of what the leak's active picture shows. */
function shownBounds(map: Homography, activeP: Rect, W: number, H: number): Rect {
  const points = corners(invert(map), activeP).filter((p) => p !== undefined);
  const xs = points.map((p) => Math.min(W, Math.max(0, p[0])));
  const ys = points.map((p) => Math.min(H, Math.max(0, p[1])));
  if (xs.length < 4) return { x: 0, y: 0, w: W, h: H };
  return {
    x: Math.min(...xs),
    y: Math.min(...ys),
    w: Math.max(...xs) - Math.min(...xs),
    h: Math.max(...ys) - Math.min(...ys),
  };
}

/**
 * The leak's thumbnails and the original's, both seen on one grid over the leak's active picture
 * (the original through the geometry), made once each and kept while they are asked for.
 */
interface ThumbViews {
  width: number;
  height: number;
  leak: (k: number) => Float32Array;
  original: (i: number) => Float32Array;
}

function thumbViews(timed: TimedLeak, leak: VideoInfo, g: Geometry): ThumbViews {
  const { width: tw, height: th, leakHeight: lth } = timed.thumb;
  const { active } = g;
  const { sw, sh, aw, ah } = g.size;
  const tActive = {
    x: (active.x * tw) / leak.width,
    y: (active.y * lth) / leak.height,
    w: (active.w * tw) / leak.width,
    h: (active.h * lth) / leak.height,
  };
  const vh = Math.max(2, Math.round((tw * ah) / aw));
  // A view cell to a leak search pixel, back to an original search pixel, on to its thumbnail.
  const viewToThumb = compose(
    scaleShift(tw / sw, th / sh, 0, 0),
    compose(invert(g.searchMap.map), scaleShift(aw / tw, ah / vh, 0, 0)),
  );
  const cached = (make: (k: number) => Float32Array) => {
    const made = new Map<number, Float32Array>();
    return (k: number) => {
      let v = made.get(k);
      if (!v) {
        // Frames are asked for in order, a few apart: older ones will not come back.
        if (made.size > 64) for (const old of made.keys()) if (old < k - 16) made.delete(old);
        v = make(k);
        made.set(k, v);
      }
      return v;
    };
  };
  return {
    width: tw,
    height: vh,
    leak: cached((k) => resizeArea(timed.sampled.thumbs[k] as Uint8Array, tw, lth, tActive, tw, vh)),
    original: cached((i) =>
      warpedView({ data: timed.origThumbs[i] as Uint8Array, width: tw, height: th }, viewToThumb, tw, vh),
    ),
  };
}

/** refineTime's comparison: leak sample k against original frame i, as the views show them. */
const scorer = (views: ThumbViews) => (k: number, i: number) => correlation(views.leak(k), views.original(i));
