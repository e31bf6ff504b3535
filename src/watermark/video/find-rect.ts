import { correlation, type Picture, type Rect, sampleThrough } from './geometry.js';

// The rectangle of the original that a leak shows (./geometry.ts says how a leak's picture sits in it).

export type Pairs = ReadonlyArray<{ leak: Picture; original: Picture }>;

/**
 * Scores rectangles: the normalized cross-correlation between leak pictures (each the whole
 * active area) and the matching original pictures seen through `rect`, on every `step`-th row and
 * column. 1 is a perfect match up to brightness and contrast. The leak's pixels on each grid, and
 * room for the original's view on it, are made once: the search scores thousands of rectangles.
 */
function rectScorer(pairs: Pairs, originalWidth: number): (rect: Rect, step: number) => number {
  const grids = new Map<number, Array<{ pixels: Float64Array; view: Float64Array }>>();
  const gridsFor = (step: number) => {
    let made = grids.get(step);
    if (!made) {
      made = pairs.map(({ leak }) => {
        const cols = Math.ceil(leak.width / step);
        const rows = Math.ceil(leak.height / step);
        const pixels = new Float64Array(cols * rows);
        for (let r = 0; r < rows; r++)
          for (let c = 0; c < cols; c++) pixels[r * cols + c] = leak.data[r * step * leak.width + c * step] as number;
        return { pixels, view: new Float64Array(cols * rows) };
      });
      grids.set(step, made);
    }
    return made;
  };
  return (rect, step) => {
    const made = gridsFor(step);
    let total = 0;
    for (const [n, { leak, original }] of pairs.entries()) {
      const { pixels, view } = made[n] as { pixels: Float64Array; view: Float64Array };
      sampleThrough(original, originalWidth, rect, leak.width, leak.height, step, view);
      total += correlation(pixels, view);
    }
    return total / pairs.length;
  };
}

/** Scores this close count as equal, and the untouched frame wins (see findRect). */
const TIE = 0.002;

/**
 * Below this score the untouched frame is never taken without the whole search: a large crop can
 * leave the whole frame a local best among its neighbours, though a poor match.
 */
const WHOLE_FRAME_MATCH = 0.95;

/** The search's shared pieces: how rectangles are scored, shaped and kept inside the picture. */
interface RectSearch {
  width: number;
  height: number;
  /** one search-picture pixel, in original pixels */
  px: number;
  score: (rect: Rect, step: number) => number;
  /**
   * the rectangle of scale s (of the width) centred on (cx, cy), with the leak's aspect where it was cropped uniformly
   */
  centred: (s: number, cx: number, cy: number) => Rect;
  fits: (r: Rect) => boolean;
}

function rectSearch(
  pairs: Pairs,
  width: number,
  height: number,
  activeAspect: number,
  keepAspect?: boolean,
): RectSearch {
  // An aspect far from the original's means the leak was stretched, not cropped: keep the whole frame's.
  const uniform = keepAspect ?? Math.abs(activeAspect / (height / width) - 1) < 0.06;
  return {
    width,
    height,
    px: width / (pairs[0]?.original.width ?? 160),
    score: rectScorer(pairs, width),
    centred: (s, cx, cy) => {
      const w = s * width;
      const h = uniform ? w * activeAspect : s * height;
      return { x: cx - w / 2, y: cy - h / 2, w, h };
    },
    fits: (r) =>
      r.w <= width + 1e-6 &&
      r.h <= height + 1e-6 &&
      r.x >= -1e-6 &&
      r.y >= -1e-6 &&
      r.x + r.w <= width + 1e-6 &&
      r.y + r.h <= height + 1e-6,
  };
}

/**
 * Most leaks are only re-encoded or scaled, not cropped. When the untouched frame matches well
 * and none of the fine search's first moves away from it (a half-percent smaller, shifted by up
 * to a search pixel) scores higher, it is the answer and the search over every rectangle (a
 * second or two) is skipped; a crop, even of 1%, makes a smaller rectangle score higher, and
 * then the search decides (where the untouched frame may still win a tie).
 */
function untouchedFrame(search: RectSearch, whole: Rect): { rect: Rect; score: number } | undefined {
  const { width, height, px, centred, fits } = search;
  const score = search.score(whole, 1);
  const shifts = [-px, 0, px];
  const nearer = shifts.flatMap((dy) => shifts.map((dx) => centred(1 - 0.005, width / 2 + dx, height / 2 + dy)));
  return score >= WHOLE_FRAME_MATCH && nearer.every((r) => !fits(r) || search.score(r, 1) < score)
    ? { rect: whole, score }
    : undefined;
}

/**
 * Every scale from minScale to 1 in steps of 1%, at positions two search pixels apart, comparing
 * every fourth pixel; only those within NEAR of `near`'s scale and centre where it is given.
 */
function coarseRect(search: RectSearch, minScale: number, near?: Rect): Rect {
  const { width, height, px, centred, fits } = search;
  const [lo, hi] = near ? [near.w / width - NEAR, near.w / width + NEAR] : [minScale, 1];
  const close = (r: Rect) =>
    !near ||
    (Math.abs(r.x + r.w / 2 - (near.x + near.w / 2)) <= NEAR * width &&
      Math.abs(r.y + r.h / 2 - (near.y + near.h / 2)) <= NEAR * width);
  let coarse: { rect: Rect; score: number } = { rect: centred(1, width / 2, height / 2), score: -2 };
  for (let s = Math.min(1, hi); s >= Math.max(minScale, lo) - 1e-9; s -= 0.01) {
    const r0 = centred(s, 0, 0);
    const xs = [(width - r0.w) / 2];
    const ys = [(height - r0.h) / 2];
    for (let x = 0; x + r0.w <= width + 1e-6; x += 2 * px) xs.push(x);
    for (let y = 0; y + r0.h <= height + 1e-6; y += 2 * px) ys.push(y);
    for (const y of ys) {
      for (const x of xs) {
        const r = { x, y, w: r0.w, h: r0.h };
        if (!fits(r) || !close(r)) continue;
        const score = search.score(r, 4);
        if (score > coarse.score) coarse = { rect: r, score };
      }
    }
  }
  return coarse.rect;
}

/** How far (a share of the width, in scale and in centre) the coarse search strays from a rectangle it is told of. */
const NEAR = 0.08;

/** Centre and scale in halving steps from `start`, comparing every pixel. */
function fineRect(search: RectSearch, start: Rect): { rect: Rect; score: number } {
  const { width, px, centred, fits } = search;
  let best = { rect: start, score: search.score(start, 1) };
  for (let delta = px, ds = 0.005, moves = 0; delta > px / 16; moves++) {
    const c = best.rect;
    const s0 = c.w / width;
    const cx = c.x + c.w / 2;
    const cy = c.y + c.h / 2;
    for (const s of [s0 - ds, s0, s0 + ds]) {
      for (const dy of [-delta, 0, delta]) {
        for (const dx of [-delta, 0, delta]) {
          if (s === s0 && dx === 0 && dy === 0) continue;
          const r = centred(s, cx + dx, cy + dy);
          if (!fits(r)) continue;
          const score = search.score(r, 1);
          if (score > best.score) best = { rect: r, score };
        }
      }
    }
    // Stay at this step while it still improves (a few moves at most), then halve it.
    if (best.rect === c || moves >= 3) {
      delta /= 2;
      ds /= 2;
      moves = -1;
    }
  }
  return best;
}

/**
 * The rectangle of the original (width × height) that the leak's active area shows: the
 * untouched frame when it plainly matches, otherwise a coarse search (coarseRect) refined
 * (fineRect). Returns the rectangle and its score. `keepAspect` searches rectangles of the leak's
 * aspect whatever the original's (./film-window.ts: a film inside a leak of another aspect); `near`
 * searches only around a rectangle found before (./crop-window.ts: the window a heavy crop shows).
 */
export function findRect(
  pairs: Pairs,
  width: number,
  height: number,
  activeAspect: number,
  minScale = 0.8,
  options: { keepAspect?: boolean; near?: Rect } = {},
): { rect: Rect; score: number } {
  const search = rectSearch(pairs, width, height, activeAspect, options.keepAspect);
  const whole = { x: 0, y: 0, w: width, h: height };
  const wholeFits = search.fits(whole) && Math.abs(activeAspect / (height / width) - 1) < 0.01;
  const untouched = wholeFits ? untouchedFrame(search, whole) : undefined;
  if (untouched) return untouched;
  const best = fineRect(search, coarseRect(search, minScale, options.near));
  // The untouched frame, when it scores as well, is the answer: a leak is far more often only
  // re-encoded or scaled than cropped, and a sub-pixel fit to coding noise would misplace it.
  if (wholeFits) {
    const score = search.score(whole, 1);
    if (score >= best.score - TIE) return { rect: whole, score };
  }
  return best;
}
