/**
 * The 2-D DTCWT of gpu/dtcwt/cpu.ts as tensor ops on a batch of same-sized frames [N, H, W, 1].
 *
 * The CPU code filters columns, transposes, filters columns again; here the second pass filters
 * axis 2 directly, so no transposes are needed and the four subbands of a level come out of two
 * row-filter and two column-filter calls on stacked channels. Everything must run inside tf.tidy
 * (the callers in backend.ts do): intermediates are left to the enclosing scope.
 */
import type * as Tf from '@tensorflow/tfjs';
import type { DtcwtFilters } from '../dtcwt/filters.js';
import {
  type ColumnPlan,
  coldfiltPlan,
  colfilterPlan,
  colifiltPlan,
  type EdgePad,
  filterAxis,
  type TfModule,
} from './column.js';

/** One level's highpasses as [N, rows, cols, 6] real and imaginary parts, orientation innermost like cpu.ts. */
export interface HighpassTensors {
  re: Tf.Tensor4D;
  im: Tf.Tensor4D;
}

const NO_PAD: EdgePad = { before: 0, after: 0 };

/**
 * Row and column filtering of one level: `low` and `high` are the plans for the two filters,
 * `rowPad`/`colPad` the edge repetition cpu.ts applies first. Returns [lowlow, quads] where the
 * quads channels are the (high-low, low-high, high-high) pairs: horizontal, vertical, diagonal.
 */
function analyse(tf: TfModule, x: Tf.Tensor4D, low: ColumnPlan, high: ColumnPlan, rowPad: EdgePad, colPad: EdgePad) {
  const byRows = tf.concat([filterAxis(tf, x, 1, low, rowPad), filterAxis(tf, x, 1, high, rowPad)], 3); // [lo, hi]
  const lowCols = filterAxis(tf, byRows, 2, low, colPad); // [lolo, hi-lo = horizontal]
  const highCols = filterAxis(tf, byRows, 2, high, colPad); // [lo-hi = vertical, hi-hi = diagonal]
  const [n, rows, cols] = lowCols.shape;
  const lowlow = lowCols.slice([0, 0, 0, 0], [n, rows, cols, 1]);
  const quads = tf.concat([lowCols.slice([0, 0, 0, 1], [n, rows, cols, 1]), highCols], 3); // [h, v, d]
  return { lowlow, quads };
}

/**
 * q2c: each 2x2 block (a b / c d) of the quad channels [h, v, d] becomes p = (a + jb)/sqrt2,
 * q = (d - jc)/sqrt2, and the pair (p - q, p + q) goes to the orientations cpu.ts uses:
 * horizontal (0, 5), vertical (2, 3), diagonal (1, 4).
 */
function q2c(tf: TfModule, quads: Tf.Tensor4D): HighpassTensors {
  const [n, rows2, cols2, k] = quads.shape;
  const rows = rows2 / 2;
  const cols = cols2 / 2;
  const blocks = quads.reshape([n * rows, 2, cols, 2, k]);
  const at = (r: number, c: number) =>
    blocks
      .slice([0, r, 0, c, 0], [n * rows, 1, cols, 1, k])
      .reshape([n, rows, cols, k])
      .mul(Math.SQRT1_2);
  const [a, b, c, d] = [at(0, 0), at(0, 1), at(1, 0), at(1, 1)];
  // Channels [h-, v-, d-, h+, v+, d+] reordered to orientations 0..5 = h-, d-, v-, v+, d+, h+.
  const order = tf.tensor1d([0, 2, 1, 4, 5, 3], 'int32');
  const re = tf.gather(tf.concat([a.sub(d), a.add(d)], 3), order, 3) as Tf.Tensor4D;
  const im = tf.gather(tf.concat([b.add(c), b.sub(c)], 3), order, 3) as Tf.Tensor4D;
  return { re, im };
}

/** c2q, the inverse of q2c: quad channels [v, h, d] (the order inverse() stacks them in). */
function c2q(tf: TfModule, hp: HighpassTensors): Tf.Tensor4D {
  const [n, rows, cols] = hp.re.shape;
  const pick = (x: Tf.Tensor4D, o: number[]) =>
    tf
      .gather(x, tf.tensor1d(o, 'int32'), 3)
      .mul(Math.SQRT1_2)
      .reshape([n * rows, cols, 3]);
  const [r1, i1, r2, i2] = [
    pick(hp.re, [2, 0, 1]),
    pick(hp.im, [2, 0, 1]),
    pick(hp.re, [3, 5, 4]),
    pick(hp.im, [3, 5, 4]),
  ];
  // P = w1 + w2, Q = w1 - w2; a = Re P, b = Im P, c = Im Q, d = -Re Q.
  const top = tf.stack([r1.add(r2), i1.add(i2)], 2);
  const bottom = tf.stack([i1.sub(i2), r2.sub(r1)], 2);
  return tf.stack([top, bottom], 1).reshape([n, 2 * rows, 2 * cols, 3]);
}

/** The padding cpu.ts applies before a q-shift level so coldfilt sees a multiple of 4. */
const toMultipleOf4 = (n: number): EdgePad => (n % 4 !== 0 ? { before: 1, after: 1 } : NO_PAD);

/** Forward transform of x [N, H, W, 1]: the coarsest lowpass and the highpasses, finest first. */
export function forwardTensors(tf: TfModule, x: Tf.Tensor4D, levels: number, filters: DtcwtFilters) {
  const [, height, width] = x.shape;
  // Odd sizes: python repeats the bottom row / right column once, folded into the first gathers.
  const rowPad = { before: 0, after: height % 2 };
  const colPad = { before: 0, after: width % 2 };
  if (levels === 0) {
    const identity = colfilterPlan([1]);
    return { lowpass: filterAxis(tf, filterAxis(tf, x, 1, identity, rowPad), 2, identity, colPad), highpasses: [] };
  }
  const { h0o, h1o } = filters.biort;
  const { h0a, h0b, h1a, h1b } = filters.qshift;
  let { lowlow, quads } = analyse(tf, x, colfilterPlan(h0o), colfilterPlan(h1o), rowPad, colPad);
  const highpasses = [q2c(tf, quads)];
  const low = coldfiltPlan(h0b, h0a);
  const high = coldfiltPlan(h1b, h1a);
  for (let level = 2; level <= levels; level++) {
    const [, rows, cols] = lowlow.shape;
    ({ lowlow, quads } = analyse(tf, lowlow, low, high, toMultipleOf4(rows), toMultipleOf4(cols)));
    highpasses.push(q2c(tf, quads));
  }
  return { lowpass: lowlow, highpasses };
}

/**
 * One synthesis step: lowpass z and the quads [v, h, d] (same size) through the synthesis filters
 * on rows, then on columns, as y1 = lo(z) + hi(h), y2 = lo(v) + hi(d), z = lo(y1) + hi(y2).
 */
function synthesise(tf: TfModule, z: Tf.Tensor4D, quads: Tf.Tensor4D, low: ColumnPlan, high: ColumnPlan): Tf.Tensor4D {
  const [n, rows, cols] = z.shape;
  const channels = tf.concat([z, quads], 3); // [z, v, h, d]
  const pair = (from: number) => channels.slice([0, 0, 0, from], [n, rows, cols, 2]);
  const y = tf.add(filterAxis(tf, pair(0), 1, low), filterAxis(tf, pair(2), 1, high)) as Tf.Tensor4D; // [y1, y2]
  const [, yRows, yCols] = y.shape;
  const part = (c: number) => y.slice([0, 0, 0, c], [n, yRows, yCols, 1]);
  return tf.add(filterAxis(tf, part(0), 2, low), filterAxis(tf, part(1), 2, high));
}

/**
 * Inverse transform back to [N, height, width, 1]. `lowpass` and `highpasses` must have the shapes
 * forwardTensors gives (backend.ts checks that before calling).
 */
export function inverseTensors(
  tf: TfModule,
  lowpass: Tf.Tensor4D,
  highpasses: HighpassTensors[],
  height: number,
  width: number,
  filters: DtcwtFilters,
): Tf.Tensor4D {
  const { g0o, g1o } = filters.biort;
  const { g0a, g0b, g1a, g1b } = filters.qshift;
  const low = colifiltPlan(g0b, g0a);
  const high = colifiltPlan(g1b, g1a);
  let z = lowpass;
  for (let level = highpasses.length; level >= 2; level--) {
    z = synthesise(tf, z, c2q(tf, highpasses[level - 1] as HighpassTensors), low, high);
    // Undo the forward pass's divisible-by-4 padding: the result must be twice the next level up.
    const [n, rows, cols] = z.shape;
    const [, nextRows, nextCols] = (highpasses[level - 2] as HighpassTensors).re.shape;
    z = z.slice([0, (rows - 2 * nextRows) / 2, (cols - 2 * nextCols) / 2, 0], [n, 2 * nextRows, 2 * nextCols, 1]);
  }
  const first = highpasses[0];
  if (first) z = synthesise(tf, z, c2q(tf, first), colfilterPlan(g0o), colfilterPlan(g1o));
  const [n] = z.shape;
  return z.slice([0, 0, 0, 0], [n, height, width, 1]);
}
