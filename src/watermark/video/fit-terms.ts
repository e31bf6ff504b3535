/**
 * The sums Levenberg-Marquardt needs for ./fit-homography.ts: for a map, each pair's gain and
 * offset, the (Huber) cost of the residuals g·L(G(o)) + c − O(o) over the original's pixels o that
 * land in the leak, and the normal equations of the fit's parameters.
 */

/** Fewer of the original's pixels than this share landing in the leak is not a fit (the map ran off). */
const LEAST_OVERLAP = 0.3;
/**
 * The original's pixels this near its edge are left out: in a turned or tilted leak they sit
 * beside the black the leak is filled with, and reading them there pulls the map off by a few
 * tenths of a pixel.
 */
const BORDER = 2;

export interface Level {
  step: number;
  pairs: Array<{ leak: Float32Array; gx: Float32Array; gy: Float32Array; original: Float32Array }>;
}

export interface Fit {
  /** the map in normalized coordinates: original [−1, 1]² to leak [−1, 1]² */
  h: number[];
  gains: number[];
  offsets: number[];
  cost: number;
}

export interface Frames {
  ow: number;
  oh: number;
  lw: number;
  lh: number;
}

export interface Evaluation {
  cost: number;
  normal: number[][];
  gradient: number[];
}

/**
 * The mean squared residual over the pixels that land inside the leak (infinite where too few
 * do), and with `linearize`, the normal equations JᵀJ and Jᵀr of the eight map parameters, then
 * each pair's gain, then each pair's offset.
 */
export function evaluate(
  level: Level,
  frames: Frames,
  fit: Fit,
  huber: number,
  linearize = false,
  residuals?: number[],
): Evaluation {
  const count = fit.gains.length;
  const size = 8 + 2 * count;
  const normal = linearize ? Array.from({ length: size }, () => new Array<number>(size).fill(0)) : [];
  const gradient = new Array<number>(size).fill(0);
  let cost = 0;
  let used = 0;
  let total = 0;
  for (const [p, pair] of level.pairs.entries()) {
    const one = pairTerms(pair, level.step, frames, fit, p, { huber, linearize, residuals });
    cost += one.cost;
    used += one.used;
    total += one.total;
    if (linearize) scatter(normal, gradient, one, [0, 1, 2, 3, 4, 5, 6, 7, 8 + p, 8 + count + p]);
  }
  const enough = total > 0 && used >= LEAST_OVERLAP * total;
  return { cost: enough ? cost / used : Number.POSITIVE_INFINITY, normal, gradient };
}

/** One pair's share: its squared residuals, and its 10 × 10 normal equations (map, its gain, its offset). */
interface PairTerms {
  cost: number;
  used: number;
  total: number;
  jtj: Float64Array;
  jtr: Float64Array;
}

interface TermOptions {
  huber: number;
  linearize: boolean;
  /** where to put |r| of every pixel used */
  residuals?: number[] | undefined;
}

function pairTerms(
  pair: Level['pairs'][number],
  step: number,
  frames: Frames,
  fit: Fit,
  p: number,
  how: TermOptions,
): PairTerms {
  const { ow, oh, lw, lh } = frames;
  const { h } = fit;
  const g = fit.gains[p] as number;
  const c = fit.offsets[p] as number;
  const { huber: k, linearize, residuals } = how;
  const [h0, h1, h2, h3, h4, h5, h6, h7, h8] = h as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const jtj = new Float64Array(100);
  const jtr = new Float64Array(10);
  const j = new Float64Array(10);
  let cost = 0;
  let used = 0;
  let total = 0;
  for (let y = BORDER + 0.5; y < oh - BORDER; y += step) {
    const ny = (2 * y) / oh - 1;
    for (let x = BORDER + 0.5; x < ow - BORDER; x += step) {
      total++;
      const nx = (2 * x) / ow - 1;
      const d = h6 * nx + h7 * ny + h8;
      if (!(d > 1e-6)) continue;
      const wx = (h0 * nx + h1 * ny + h2) / d;
      const wy = (h3 * nx + h4 * ny + h5) / d;
      const u = ((wx + 1) * lw) / 2 - 0.5;
      const v = ((wy + 1) * lh) / 2 - 0.5;
      if (u < 0.5 || v < 0.5 || u > lw - 1.5 || v > lh - 1.5) continue;
      used++;
      const value = sample(pair.leak, lw, u, v);
      const r = g * value + c - (pair.original[Math.floor(y) * ow + Math.floor(x)] as number);
      const size = Math.abs(r);
      // a quarter of them is plenty for a median, and sorts four times faster
      if (residuals && (used & 3) === 0) residuals.push(size);
      cost += size <= k ? r * r : 2 * k * size - k * k;
      if (!linearize) continue;
      const weight = size <= k ? 1 : k / size;
      // dL/dw in normalized units: a normalized unit is lw/2 (lh/2) leak pixels.
      const lx = (g * sample(pair.gx, lw, u, v) * lw) / 2;
      const ly = (g * sample(pair.gy, lw, u, v) * lh) / 2;
      const back = -(lx * wx + ly * wy) / d;
      j[0] = (lx * nx) / d;
      j[1] = (lx * ny) / d;
      j[2] = lx / d;
      j[3] = (ly * nx) / d;
      j[4] = (ly * ny) / d;
      j[5] = ly / d;
      j[6] = back * nx;
      j[7] = back * ny;
      j[8] = value;
      j[9] = 1;
      for (let a = 0; a < 10; a++) {
        const ja = (j[a] as number) * weight;
        jtr[a] = (jtr[a] as number) + ja * r;
        for (let b = a; b < 10; b++) jtj[a * 10 + b] = (jtj[a * 10 + b] as number) + ja * (j[b] as number);
      }
    }
  }
  return { cost, used, total, jtj, jtr };
}

/** Adds a pair's terms (upper triangle) into the whole system at the indices `at`. */
function scatter(normal: number[][], gradient: number[], one: PairTerms, at: readonly number[]): void {
  for (let a = 0; a < 10; a++) {
    const ia = at[a] as number;
    gradient[ia] = (gradient[ia] as number) + (one.jtr[a] as number);
    for (let b = a; b < 10; b++) {
      const ib = at[b] as number;
      const v = one.jtj[a * 10 + b] as number;
      (normal[ia] as number[])[ib] = ((normal[ia] as number[])[ib] as number) + v;
      if (ib !== ia) (normal[ib] as number[])[ia] = ((normal[ib] as number[])[ia] as number) + v;
    }
  }
}

function sample(data: Float32Array, width: number, u: number, v: number): number {
  const i = Math.floor(u);
  const k = Math.floor(v);
  const a = u - i;
  const b = v - k;
  const at = k * width + i;
  const top = (data[at] as number) * (1 - a) + (data[at + 1] as number) * a;
  const bottom = (data[at + width] as number) * (1 - a) + (data[at + width + 1] as number) * a;
  return top * (1 - b) + bottom * b;
}
