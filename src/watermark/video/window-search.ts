import { dot, signature } from './align.js';
import type { Rect } from './geometry.js';

/**
 * The search that ./film-window.ts (the film inside the leak's frame) and ./crop-window.ts (the
 * part of the film a leak shows) share: windows of a picture compared on pairs of leak samples,
 * each pair held to the original's time.
 */

/**
 * Leak sample pairs compared per window: a few for every window, more for the best few, so that
 * a median is not one frame's accident.
 */
const COARSE_SAMPLES = 12;
export const SAMPLES = 24;
/** Windows compared again on SAMPLES pairs. */
const FINALISTS = 4;
/** Original frames each sample is compared with at first, at most: a film's neighbouring frames look alike. */
const ORIGINAL_FRAMES = 1500;
/** The smallest window searched, as a share of the largest of its aspect that fits. */
export const SMALLEST = 0.4;
/**
 * How much better a window's match must be than the whole frame's to be read. Below it a window
 * matches about as well as a crop of the same picture does, and reading it costs a placement and
 * a scoring pass (and for a film inside the leak, a second decode) for nothing. Matches are at
 * most 1: where the whole frame matches within this of it, no window is looked for (both searches
 * cost some 5 s for a minute of 640×360 on 2 cores).
 */
export const WINDOW_GAIN = 0.1;

/** The leak's side of a search: its thumbnails (width × height), each sample's time in original frames, the fps. */
export interface LeakThumbs {
  thumbs: readonly Uint8Array[];
  width: number;
  height: number;
  positions: Int32Array;
  fps: number;
}

/** Two leak samples PAIR_APART apart: where the first matches the original, the second must match as much later. */
export interface SamplePair {
  k: number;
  partner: number;
  /** the partner's position less the first's, in original frames */
  apart: number;
}

/**
 * Seconds between the samples of a pair. A window of a pan or a zoom may look like the whole
 * picture at some other moment; it seldom does so at two moments this far apart with the same
 * time between them, as the film's own window does.
 */
const PAIR_APART = 2;
/** How far from the expected frame a partner may match: a few frames, and a leak played up to 12% fast or slow. */
const pairSlack = (apart: number) => 3 + Math.ceil(0.12 * Math.abs(apart));

/** Up to `most` pairs evenly spread over the leak, leaving out flat samples (black, a fade): they match nothing. */
export function samplePairs(input: LeakThumbs, most: number): SamplePair[] {
  const { thumbs, width, height, positions, fps } = input;
  const whole = { x: 0, y: 0, w: width, h: height };
  const spread = (from: readonly number[], n: number) => {
    const m = Math.min(n, from.length);
    return Array.from({ length: m }, (_, j) => from[Math.floor(((j + 0.5) * from.length) / m)] as number);
  };
  const shaped = spread([...thumbs.keys()], 2 * most).filter((k) =>
    signature(thumbs[k] as Uint8Array, width, whole).some((v) => v !== 0),
  );
  const gap = PAIR_APART * fps;
  const at = (k: number) => positions[k] as number;
  const pairs: SamplePair[] = [];
  for (const k of spread(shaped, most)) {
    let partner = k;
    while (partner + 1 < thumbs.length && at(partner) - at(k) < gap) partner++;
    // Near the leak's end the partner comes before.
    if (at(partner) - at(k) < gap) while (partner > 0 && at(k) - at(partner) < gap) partner--;
    if (partner !== k) pairs.push({ k, partner, apart: at(partner) - at(k) });
  }
  return pairs;
}

export interface Match {
  k: number;
  /** the original frame it matches best */
  i: number;
  score: number;
}

export interface OriginalMatcher {
  /** a signature's best original frame */
  best(sig: Float32Array): { i: number; score: number };
  /** a signature's best match among the original frames within `slack` of `at` (-1 where none is) */
  near(sig: Float32Array, at: number, slack: number): number;
}

/**
 * Each signature's best original frame: among every stride-th frame first, then every frame
 * around the one found (the stride keeps a long film's search bounded).
 */
export function originalMatcher(count: number, sigAt: (i: number) => Float32Array): OriginalMatcher {
  const stride = Math.max(1, Math.ceil(count / ORIGINAL_FRAMES));
  const around = (sig: Float32Array, from: number, to: number, by: number) => {
    let best = { i: -1, score: -1 };
    for (let i = Math.max(0, from); i <= Math.min(count - 1, to); i += by) {
      const score = dot(sig, sigAt(i));
      if (score > best.score) best = { i, score };
    }
    return best;
  };
  return {
    best: (sig) => {
      const coarse = around(sig, 0, count - 1, stride);
      return stride === 1 ? coarse : around(sig, coarse.i - stride + 1, coarse.i + stride - 1, 1);
    },
    near: (sig, at, slack) => around(sig, at - slack, at + slack, 1).score,
  };
}

/**
 * How well the leak's samples match the original through some window, in time: for each pair, the
 * first sample's best match and its partner's match where the first one says it should be,
 * averaged; the median over the pairs. `sig` is a leak sample's signature as the window sees it.
 */
export function pairScore(
  pairs: readonly SamplePair[],
  sig: (k: number) => Float32Array,
  matcher: OriginalMatcher,
): { score: number; matches: Match[] } {
  const matches = pairs.map(({ k, partner, apart }) => {
    const first = matcher.best(sig(k));
    const second = matcher.near(sig(partner), first.i + apart, pairSlack(apart));
    return { k, i: first.i, score: (first.score + second) / 2 };
  });
  const sorted = matches.map((m) => m.score).sort((a, b) => a - b);
  return { score: sorted[sorted.length >> 1] as number, matches };
}

/**
 * The best of `candidates` (inside width × height): each scored on a few pairs, the best few moved
 * closer (nudged) and scored on them all.
 */
export function bestWindow(
  candidates: readonly Rect[],
  score: (r: Rect, pairs: readonly SamplePair[]) => number,
  pairs: readonly SamplePair[],
  size: { width: number; height: number },
): { rect: Rect; score: number } | undefined {
  const few = pairs.filter((_, n) => n % Math.ceil(pairs.length / COARSE_SAMPLES) === 0);
  let best: { rect: Rect; score: number } | undefined;
  for (const f of candidates
    .map((rect) => ({ rect, score: score(rect, few) }))
    .sort((a, b) => b.score - a.score)
    .slice(0, FINALISTS)) {
    const { rect } = nudged(f, (r) => score(r, few), size.width, size.height);
    const all = score(rect, pairs);
    if (!best || all > best.score) best = { rect, score: all };
  }
  return best;
}

/**
 * Windows of the film's aspect from the largest that fits down to 40% of it, at positions a quarter of their size
 * apart, edges included (the central half each compares still overlaps the film's; finalists are
 * moved closer, see nudged).
 */
export function windowCandidates(width: number, height: number, aspect: number): Rect[] {
  const fitW = Math.min(width, height / aspect);
  const out: Rect[] = [];
  for (let s = 1; s >= SMALLEST - 1e-9; s -= 0.1) {
    const w = s * fitW;
    const h = w * aspect;
    for (const y of steps(height - h, Math.max(1, h / 4))) {
      for (const x of steps(width - w, Math.max(1, w / 4))) out.push({ x, y, w, h });
    }
  }
  return out;
}

/**
 * A window moved by an eighth of its size, then a sixteenth, in each direction and in size, while
 * that scores higher: the grid of windowCandidates leaves the film's up to an eighth off, which
 * costs a small window's central half a good part of its match.
 */
function nudged(
  start: { rect: Rect; score: number },
  score: (r: Rect) => number,
  width: number,
  height: number,
): { rect: Rect; score: number } {
  let best = start;
  for (const share of [1 / 8, 1 / 16]) {
    const { x, y, w, h } = best.rect;
    const [dx, dy] = [w * share, h * share];
    const moves: Rect[] = [
      ...[-dx, 0, dx].flatMap((mx) => [-dy, 0, dy].map((my) => ({ x: x + mx, y: y + my, w, h }))),
      { x: x + dx / 2, y: y + dy / 2, w: w - dx, h: h - dy },
      { x: x - dx / 2, y: y - dy / 2, w: w + dx, h: h + dy },
    ];
    for (const r of moves) {
      if (r.x < 0 || r.y < 0 || r.x + r.w > width || r.y + r.h > height) continue;
      const s = score(r);
      if (s > best.score) best = { rect: r, score: s };
    }
  }
  return best;
}

/** Positions from 0 to `room` about `step` apart, both ends included; the middle alone where there is no room. */
function steps(room: number, step: number): number[] {
  if (room < 1) return [Math.max(0, room / 2)];
  const n = Math.ceil(room / step);
  return Array.from({ length: n + 1 }, (_, m) => (m * room) / n);
}
