import { centralRegion, signature } from './align.js';
import { findRect } from './find-rect.js';
import type { Rect } from './geometry.js';
import { flipped, MIRRORS, type Mirror } from './mirror.js';
import {
  bestWindow,
  type LeakThumbs,
  originalMatcher,
  pairScore,
  SAMPLES,
  type SamplePair,
  SMALLEST,
  samplePairs,
  WINDOW_GAIN,
  windowCandidates,
} from './window-search.js';

/**
 * A leak may show the film inside a larger picture: picture-in-picture over another video, or a
 * small copy on a busy background. Black bars are found as such (./align.ts's activeArea); a
 * background that moves is not, and then the film fills only part of every signature the time
 * alignment compares (measured: a film at 50% over moving noise lined up nowhere, "shows nothing of
 * the original"). The window search looks for the film at 40–100% of the leak's frame, at any
 * position, on the thumbnails the alignment already has, and by the same evidence: how well the
 * leak's pictures seen through a window match the original's somewhere in time.
 *
 * A window is taken only when it matches clearly better than the whole frame does; the leak is
 * then decoded again through it (./detect-time.ts), and both readings compete on their marks.
 */
export interface FilmWindow {
  /** where the film's picture is in the leak's thumbnails, as decoded (their pixels) */
  rect: Rect;
  /** the orientation it was found in */
  mirror: Mirror;
  /** the window's best-matched samples (k) and their original frames (i), to place it more finely on */
  matches: Array<{ k: number; i: number }>;
  /** the median of the sample pairs' match through the window (./window-search.ts) */
  score: number;
}

/** The leak's thumbnails (the whole leak frame, as decoded: each orientation is searched) and the original's. */
export interface WindowSearchInput extends LeakThumbs {
  /** the original's thumbnails (width × originalHeight) and their central signatures (./align.ts) */
  origThumbs: readonly Uint8Array[];
  originalHeight: number;
  origSigs: readonly Float32Array[];
}

/**
 * The film's window in the leak's thumbnails (thumbnail pixels, as decoded) and the orientation it
 * was found in, or undefined where the whole frame does as well.
 */
export function findFilmWindow(input: WindowSearchInput): FilmWindow | undefined {
  const { width, height, origThumbs, originalHeight, origSigs } = input;
  const pairs = samplePairs(input, SAMPLES);
  if (pairs.length === 0 || origSigs.length === 0) return undefined;
  const matcher = originalMatcher(origSigs.length, (i) => origSigs[i] as Float32Array);
  const views = MIRRORS.map((mirror) => {
    const thumbAt = orientedThumbs(input, mirror);
    // Through a window, as ./align.ts compares: its central half.
    const scoreOf = (r: Rect, on: readonly SamplePair[]) => {
      const region = centralRegion(r);
      return pairScore(on, (k) => signature(thumbAt(k), width, region), matcher);
    };
    return { mirror, thumbAt, scoreOf };
  });
  const whole = { x: 0, y: 0, w: width, h: height };
  const wholeScore = Math.max(...views.map((v) => v.scoreOf(whole, pairs).score));
  if (wholeScore > 1 - WINDOW_GAIN) return undefined;
  const aspect = originalHeight / width;
  const candidates = windowCandidates(width, height, aspect);
  let best: { rect: Rect; score: number; view: (typeof views)[number] } | undefined;
  for (const view of views) {
    const found = bestWindow(candidates, (r, on) => view.scoreOf(r, on).score, pairs, input);
    if (found && (!best || found.score > best.score)) best = { ...found, view };
  }
  if (!best || best.score < wholeScore + WINDOW_GAIN) return undefined;
  // The best window's best samples, each with its original frame, place the film to a fraction of a thumbnail pixel.
  const { view } = best;
  const matches = view
    .scoreOf(best.rect, pairs)
    .matches.sort((a, b) => b.score - a.score)
    .slice(0, 6);
  const pictures = matches.map(({ k, i }) => ({
    leak: { data: origThumbs[i] as Uint8Array, width, height: originalHeight },
    original: { data: view.thumbAt(k), width, height },
  }));
  const minScale = Math.max(SMALLEST / 2, best.rect.w / width - 0.15);
  const r = findRect(pictures, width, height, aspect, minScale, { keepAspect: true }).rect;
  const rect = unflipped(r, width, height, view.mirror);
  return { rect, mirror: view.mirror, matches: matches.map(({ k, i }) => ({ k, i })), score: best.score };
}

/** The leak's thumbnails seen through `mirror`, each flipped when first asked for (only the sampled ones are). */
export function orientedThumbs(
  input: { thumbs: readonly Uint8Array[]; width: number; height: number },
  mirror: Mirror,
): (k: number) => Uint8Array {
  const made = new Map<number, Uint8Array>();
  return (k) => {
    let t = made.get(k);
    if (!t) {
      t = flipped(input.thumbs[k] as Uint8Array, input.width, input.height, mirror);
      made.set(k, t);
    }
    return t;
  };
}

/** A rectangle of a picture seen through `mirror`, back in the unflipped picture (width × height). */
export function unflipped(r: Rect, width: number, height: number, mirror: Mirror): Rect {
  const h = mirror === 'horizontal' || mirror === 'both';
  const v = mirror === 'vertical' || mirror === 'both';
  return { x: h ? width - r.x - r.w : r.x, y: v ? height - r.y - r.h : r.y, w: r.w, h: r.h };
}
