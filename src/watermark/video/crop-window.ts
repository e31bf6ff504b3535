import { centralRegion, signature } from './align.js';
import { orientedThumbs, unflipped } from './film-window.js';
import type { Rect } from './geometry.js';
import { MIRRORS, type Mirror } from './mirror.js';
import {
  bestWindow,
  type LeakThumbs,
  originalMatcher,
  pairScore,
  SAMPLES,
  type SamplePair,
  samplePairs,
  WINDOW_GAIN,
  windowCandidates,
} from './window-search.js';

/**
 * A leak may show only part of the film, enlarged: a heavy crop. Time alignment compares central
 * halves (./align.ts); once a crop keeps less than about 80% of the frame, or sits off the
 * centre, the leak's central half shows another part of the picture than the original's, and the
 * leak lines up nowhere (measured: half the frame, off centre, read nothing). The crop search
 * looks for the window of the original (40–100% of its frame, any position) that the leak's
 * active picture shows, on the thumbnails, by the evidence ./window-search.ts weighs: pairs of
 * leak samples that match the original through the window, at the original's own time apart.
 */
export interface CropWindow {
  /** the window of the original's thumbnails (their pixels) that the leak shows */
  rect: Rect;
  /** the orientation of the leak that matched it */
  mirror: Mirror;
  /** the median of the sample pairs' match through the window (./window-search.ts) */
  score: number;
}

export interface CropSearchInput extends LeakThumbs {
  /** the leak's active picture (without black bars) in its thumbnails, as decoded */
  active: Rect;
  /** the original's thumbnails (width × originalHeight) and their central signatures (./align.ts) */
  origThumbs: readonly Uint8Array[];
  originalHeight: number;
  origSigs: readonly Float32Array[];
}

/** The window of the original the leak shows, or undefined where the whole frame matches as well. */
export function findCropWindow(input: CropSearchInput): CropWindow | undefined {
  const { width, height, active, origThumbs, originalHeight, origSigs } = input;
  const pairs = samplePairs(input, SAMPLES);
  if (pairs.length === 0 || origSigs.length === 0) return undefined;
  // The leak's side is the same for every window: its active picture's central half, in each orientation.
  const views = MIRRORS.map((mirror) => {
    const thumbAt = orientedThumbs(input, mirror);
    const region = centralRegion(flippedRect(active, width, height, mirror));
    const sigs = new Map<number, Float32Array>();
    const sig = (k: number) => {
      let s = sigs.get(k);
      if (!s) {
        s = signature(thumbAt(k), width, region);
        sigs.set(k, s);
      }
      return s;
    };
    return { mirror, sig };
  });
  const through = (r: Rect, on: readonly SamplePair[]) => {
    const matcher = originalMatcher(origThumbs.length, windowSignatures(origThumbs, width, r));
    return views.map((v) => ({ mirror: v.mirror, score: pairScore(on, v.sig, matcher).score }));
  };
  const best = (scores: ReturnType<typeof through>) => scores.reduce((a, b) => (b.score > a.score ? b : a));
  const whole = best(through({ x: 0, y: 0, w: width, h: originalHeight }, pairs));
  if (whole.score > 1 - WINDOW_GAIN) return undefined;
  const aspect = active.h / active.w;
  const candidates = windowCandidates(width, originalHeight, aspect);
  const found = bestWindow(candidates, (r, on) => best(through(r, on)).score, pairs, {
    width,
    height: originalHeight,
  });
  if (!found || found.score < whole.score + WINDOW_GAIN) return undefined;
  return {
    rect: found.rect,
    mirror: best(through(found.rect, pairs)).mirror,
    score: found.score,
  };
}

/** The original frames' signatures of window r's central half, each made when first asked for. */
function windowSignatures(origThumbs: readonly Uint8Array[], width: number, r: Rect): (i: number) => Float32Array {
  const region = centralRegion(r);
  const made = new Map<number, Float32Array>();
  return (i) => {
    let s = made.get(i);
    if (!s) {
      s = signature(origThumbs[i] as Uint8Array, width, region);
      made.set(i, s);
    }
    return s;
  };
}

/** A rectangle of a picture (width × height) as it is seen through `mirror`: flipping is its own inverse. */
const flippedRect = (r: Rect, width: number, height: number, mirror: Mirror): Rect =>
  unflipped(r, width, height, mirror);
