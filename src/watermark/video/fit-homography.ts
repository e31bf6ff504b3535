import { correlation, type Picture } from './geometry.js';
import { bilinear, compose, type Homography, invert, mapPoint, scaleShift } from './homography.js';
import { evaluate, type Fit, type Frames, type Level } from './fit-terms.js';
import { blurred, gradients, solve } from './picture-math.js';

/**
 * The projective map between a leak and its original, estimated from a few matched frame pairs at
 * the search size: a Gauss-Newton (Levenberg-Marquardt) fit of the eight parameters of the map
 * and a gain and offset per pair, minimising Σ (g·L(G(o)) + c − O(o))² over the original's pixels
 * o that land in the leak (Lucas-Kanade's direct alignment). It starts from the rectangle
 * find-rect found, turned by each of a few angles, on both pictures blurred (σ = 4 search pixels,
 * wide enough to pull a 5° turn or a 5% keystone in); the best start is then refined on sharper
 * pictures (σ = 2, 1, 0). Cost: about 30 iterations per start and level over a quarter to all of
 * the pixels of six pictures, well under a second at 320 × 180.
 */

export type FramePairs = ReadonlyArray<{ leak: Picture; original: Picture }>;

export interface FitOptions {
  /** the turns tried as starts (degrees) */
  turns?: readonly number[];
  /** the blur (σ, pixels) of each level, coarse to fine */
  levels?: readonly number[];
  /** the most Levenberg-Marquardt steps per start and level */
  iterations?: number;
}

/** Turns tried as starts, in degrees: a rotated leak is usually turned by a round few degrees at most. */
const START_TURNS = [0, -2.5, 2.5, -5, 5];
const LEVELS = [4, 2, 1, 0];
const ITERATIONS = 30;
/**
 * The map from the original's search picture to the leak's (continuous pixel coordinates of
 * each), and its score: the mean normalized cross-correlation of the pairs, as find-rect scores.
 * `start` is find-rect's answer in the same coordinates.
 */
export function fitHomography(
  pairs: FramePairs,
  start: Homography,
  how: FitOptions = {},
): { map: Homography; score: number } {
  const turns = how.turns ?? START_TURNS;
  const sigmas = how.levels ?? LEVELS;
  const first = pairs[0];
  if (!first) throw new Error('fitHomography needs at least one frame pair');
  const frames = { ow: first.original.width, oh: first.original.height, lw: first.leak.width, lh: first.leak.height };
  const toNormal = scaleShift(2 / frames.ow, 2 / frames.oh, -1, -1);
  const fromNormalLeak = scaleShift(frames.lw / 2, frames.lh / 2, frames.lw / 2, frames.lh / 2);
  const normalStart = compose(invert(fromNormalLeak), compose(start, invert(toNormal)));
  const planes = pairs.map((p) => ({ leak: standardized(p.leak), original: standardized(p.original) }));
  const levels = sigmas.map((sigma) => levelOf(planes, sigma));
  const aspect = frames.oh / frames.ow;
  let best: Fit | undefined;
  for (const degrees of turns) {
    const fit = refine(levels[0] as Level, frames, seed(normalStart, degrees, aspect, pairs.length), how.iterations);
    if (fit.cost < (best?.cost ?? Number.POSITIVE_INFINITY)) best = fit;
  }
  // No start overlapped the leak anywhere (every cost infinite): nothing to fit from.
  if (!best) return { map: start, score: scoreOf(pairs, start) };
  let fit = best;
  for (const level of levels.slice(1)) fit = refine(level, frames, fit, how.iterations);
  const map = compose(fromNormalLeak, compose(fit.h as unknown as Homography, toNormal));
  return { map, score: scoreOf(pairs, map) };
}

/** The start turned by `degrees` about the original's centre (in its pixels, so the turn is a true one). */
function seed(start: Homography, degrees: number, aspect: number, count: number): Fit {
  const t = (degrees * Math.PI) / 180;
  // Normalized x spans the width and y the height: a turn in pixels is anisotropic here.
  const turn: Homography = [Math.cos(t), -Math.sin(t) * aspect, 0, Math.sin(t) / aspect, Math.cos(t), 0, 0, 0, 1];
  return {
    h: [...compose(start, turn)],
    gains: new Array(count).fill(1),
    offsets: new Array(count).fill(0),
    cost: Number.POSITIVE_INFINITY,
  };
}

/** Both pictures of each pair (standardized), blurred by σ, with the leak's gradients. */
function levelOf(pairs: ReadonlyArray<{ leak: Plane; original: Plane }>, sigma: number): Level {
  return {
    step: sigma >= 1 ? 2 : 1,
    pairs: pairs.map(({ leak, original }) => {
      const l = blurred(leak.data, leak.width, leak.height, sigma);
      const { gx, gy } = gradients(l, leak.width, leak.height);
      return { leak: l, gx, gy, original: blurred(original.data, original.width, original.height, sigma) };
    }),
  };
}

interface Plane {
  data: Float32Array;
  width: number;
  height: number;
}

/** A picture at zero mean and unit variance, so that one gain and offset start near 1 and 0 for any pair. */
function standardized(pic: Picture): Plane {
  const { data } = pic;
  let sum = 0;
  let squares = 0;
  for (let i = 0; i < data.length; i++) {
    const v = data[i] as number;
    sum += v;
    squares += v * v;
  }
  const mean = sum / data.length;
  const scale = 1 / Math.sqrt(Math.max(1e-9, squares / data.length - mean * mean));
  const out = new Float32Array(data.length);
  for (let i = 0; i < data.length; i++) out[i] = ((data[i] as number) - mean) * scale;
  return { data: out, width: pic.width, height: pic.height };
}

/** Levenberg-Marquardt on one level, from `from`. */
function refine(level: Level, frames: Frames, from: Fit, iterations = ITERATIONS): Fit {
  const k = huberBound(level, frames, from);
  let fit = { ...from, cost: evaluate(level, frames, from, k).cost };
  let lambda = 1e-3;
  for (let n = 0; n < iterations && Number.isFinite(fit.cost); n++) {
    const { normal, gradient } = evaluate(level, frames, fit, k, true);
    const damped = normal.map((row, i) => row.map((v, j) => (i === j ? v * (1 + lambda) + 1e-9 : v)));
    const delta = solve(
      damped,
      gradient.map((g) => -g),
    );
    if (!delta) break;
    const tried = step(fit, delta);
    const cost = evaluate(level, frames, tried, k).cost;
    if (cost < fit.cost) {
      const moved = Math.max(...delta.slice(0, 8).map(Math.abs));
      fit = { ...tried, cost };
      lambda = Math.max(1e-6, lambda / 10);
      if (moved < 1e-4) break;
    } else {
      lambda *= 10;
      if (lambda > 1e6) break;
    }
  }
  return fit;
}

/**
 * Where residuals stop counting in full (Huber's loss): 1.345 robust standard deviations of the
 * start's residuals (from their median absolute value). What moves on its own in the picture (a
 * figure against a panning background, a reflection on a filmed screen) then pulls the map less
 * than the background that fits.
 */
function huberBound(level: Level, frames: Frames, fit: Fit): number {
  const residuals: number[] = [];
  evaluate(level, frames, fit, Number.POSITIVE_INFINITY, false, residuals);
  if (residuals.length === 0) return Number.POSITIVE_INFINITY;
  residuals.sort((a, b) => a - b);
  return Math.max(1e-3, 1.345 * 1.4826 * (residuals[residuals.length >> 1] as number));
}

function step(fit: Fit, delta: number[]): Fit {
  const h = fit.h.map((v, i) => (i < 8 ? v + (delta[i] as number) : v));
  const count = fit.gains.length;
  return {
    h,
    gains: fit.gains.map((g, p) => g + (delta[8 + p] as number)),
    offsets: fit.offsets.map((c, p) => c + (delta[8 + count + p] as number)),
    cost: fit.cost,
  };
}

/** The mean correlation of each original with its leak seen through the map (where it lands inside). */
export function scoreOf(pairs: FramePairs, map: Homography): number {
  let total = 0;
  for (const { leak, original } of pairs) {
    const data = leak.data;
    const seen = new Float32Array(original.width * original.height);
    for (let y = 0; y < original.height; y++) {
      for (let x = 0; x < original.width; x++) {
        const at = mapPoint(map, x + 0.5, y + 0.5);
        const inside = at && at[0] >= 0.5 && at[1] >= 0.5 && at[0] <= leak.width - 0.5 && at[1] <= leak.height - 0.5;
        seen[y * original.width + x] = inside
          ? bilinear(data, leak.width, leak.height, at[0] - 0.5, at[1] - 0.5)
          : Number.NaN;
      }
    }
    total += correlation(seen, original.data);
  }
  return total / pairs.length;
}
